import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';
import type { ToolProxy } from '../../src/workflows/tool-proxy';

/*
 * The types `proxyTools<typeof tools>()` gives a workflow. Checked by the compiler: ts-jest fails this file on a
 * type error, so each `@ts-expect-error` is a call the types must refuse.
 */

const reserveRoomContract = defineTool({
  name: 'reserve_room',
  description: 'Reserves a room.',
  input: z.object({ city: z.string(), nights: z.coerce.number() }),
  output: z.object({ bookingId: z.string() }),
  effect: 'compensable',
  undo: 'cancel_room',
  idempotent: true,
});
const reserveRoom = reserveRoomContract.implement(async () => ({ bookingId: 'b-1' }));
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Reads the weather.',
  input: z.object({ city: z.string() }),
  output: z.object({ tempC: z.number() }),
  effect: 'read-only',
}).implement(async () => ({ tempC: 20 }));

/** The worker's tools, as an array and as a record (a module's exports), the way a tools file exports them. */
export const asArray = [reserveRoom, getWeather];
export const asRecord = { reserveRoom, getWeather, notATool: 42, unnamed: defineUnnamed() };

/** A tool whose name is only known as a string: the proxy leaves it out rather than accept any name. */
function defineUnnamed() {
  const name: string = 'unnamed_tool';
  return defineTool({
    name,
    description: 'A tool named at run time.',
    input: z.object({}),
    output: z.object({}),
    effect: 'read-only',
  }).implement(async () => ({}));
}

/** Never called: it only has to compile. */
async function typed(array: ToolProxy<typeof asArray>, record: ToolProxy<typeof asRecord>) {
  const booking: { bookingId: string } = await array.reserve_room({ city: 'Bern', nights: 2 });
  const weather: { tempC: number } = await record.get_weather({ city: 'Bern' }, { callId: 'weather-bern' });
  // @ts-expect-error: the input of reserve_room needs a city
  await array.reserve_room({ nights: 2 });
  // @ts-expect-error: get_weather returns no bookingId
  const wrong: { bookingId: string } = await record.get_weather({ city: 'Bern' });
  // @ts-expect-error: there is no tool named notATool
  await record.notATool({});
  // @ts-expect-error: a tool without a literal name gets no method, and no name is accepted in its place
  await record.some_other_name({});
  return [booking, weather, wrong];
}

describe('defineTool and the tool proxy types', () => {
  it('keep a tool’s name as a literal type', () => {
    const name: 'reserve_room' = reserveRoomContract.name;
    const fromTool: 'get_weather' = getWeather.contract.name;
    expect([name, fromTool]).toEqual(['reserve_room', 'get_weather']);
  });

  it('type a proxy from an array or a record of tools (checked when this file compiles)', () => {
    expect(typeof typed).toBe('function');
  });
});
