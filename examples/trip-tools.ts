import { z } from 'zod';
import { compensationInput } from '../src/tools/compensation-input';
import { defineTool, type Tool } from '../src/tools/define-tool';
import { TripServices } from './trip-services';

/** The demo's downstream systems (one per worker process). */
export const tripServices = new TripServices();

const FLIGHTS = [
  { flightId: 'LH1163', from: 'LIS', to: 'BER', departure: '2026-12-18T07:05', priceEur: 189 },
  { flightId: 'TP550', from: 'LIS', to: 'BER', departure: '2026-12-18T12:40', priceEur: 142 },
  { flightId: 'FR2381', from: 'LIS', to: 'BER', departure: '2026-12-18T19:15', priceEur: 96 },
] as const;

/** Contract: search flights (read-only). */
export const searchFlightsContract = defineTool({
  name: 'search_flights',
  description:
    'Lists flights between two airports on a date, cheapest first. Use before book_flight to get a flightId. Does not book anything.',
  input: z.object({
    from: z.string().length(3).describe('IATA code of the departure airport, e.g. LIS'),
    to: z.string().length(3).describe('IATA code of the arrival airport, e.g. BER'),
    date: z.iso.date().describe('Departure date, YYYY-MM-DD'),
    cabin: z.enum(['economy', 'business']).default('economy'),
  }),
  output: z.object({
    flights: z.array(
      z.object({ flightId: z.string(), from: z.string(), to: z.string(), departure: z.string(), priceEur: z.number() }),
    ),
  }),
  effect: 'read-only',
  idempotent: true,
});

/** Contract: book a flight (compensable by cancel_flight). */
export const bookFlightContract = defineTool({
  name: 'book_flight',
  description: 'Books seats on a flight found by search_flights. Do not use to look up prices or schedules.',
  input: z.object({ flightId: z.string(), passengers: z.number().int().min(1).max(9) }),
  output: z.object({ bookingId: z.string(), flightId: z.string(), passengers: z.number() }),
  effect: 'compensable',
  undo: 'cancel_flight',
  idempotent: true,
});

/** Contract: cancel a flight booking (the undo of book_flight). */
export const cancelFlightContract = defineTool({
  name: 'cancel_flight',
  description: 'Cancels the flight booked by an earlier book_flight call. Used to undo book_flight.',
  input: compensationInput(bookFlightContract),
  output: z.object({ cancelled: z.boolean() }),
  effect: 'irreversible',
  idempotent: true,
});

/** Contract: book a hotel (compensable by cancel_hotel). Its API is flaky in the demo. */
export const bookHotelContract = defineTool({
  name: 'book_hotel',
  description: 'Books a hotel room in a city for a number of nights. Do not use for flights.',
  input: z.object({
    city: z.string(),
    checkIn: z.iso.date(),
    nights: z.number().int().min(1).max(30),
    room: z.enum(['single', 'double', 'suite']),
  }),
  output: z.object({ bookingId: z.string(), city: z.string(), nights: z.number() }),
  effect: 'compensable',
  undo: 'cancel_hotel',
  idempotent: true,
  retry: { maximumAttempts: 4, initialDelay: '300 ms', maxDelay: '2 s' },
});

/** Contract: cancel a hotel booking (the undo of book_hotel). */
export const cancelHotelContract = defineTool({
  name: 'cancel_hotel',
  description: 'Cancels the hotel room booked by an earlier book_hotel call. Used to undo book_hotel.',
  input: compensationInput(bookHotelContract),
  output: z.object({ cancelled: z.boolean() }),
  effect: 'irreversible',
  idempotent: true,
});

/** Contract: pay for the trip (irreversible, so it comes last). */
export const payContract = defineTool({
  name: 'pay',
  description: 'Charges the card on file for the trip. Irreversible: call only after every booking succeeded.',
  input: z.object({ amountEur: z.number().positive(), reference: z.string() }),
  output: z.object({ paymentId: z.string(), amountEur: z.number() }),
  effect: 'irreversible',
  idempotent: true,
});

/** The demo card is declined above this amount (the compensation scenario). */
const CARD_LIMIT_EUR = 1000;

/** An HTTP-like error, as a fetch wrapper would raise it. */
function httpError(status: number, message: string): Error {
  return Object.assign(new Error(message), { status });
}

/** The implemented demo tools. */
export const tools: Tool[] = [
  searchFlightsContract.implement(async ({ from, to }) => ({
    flights: FLIGHTS.filter((f) => f.from === from && f.to === to)
      .map((f) => ({ ...f }))
      .sort((a, b) => a.priceEur - b.priceEur),
  })),
  bookFlightContract.implement(async ({ flightId, passengers }, ctx) => {
    if (!FLIGHTS.some((f) => f.flightId === flightId)) {
      throw httpError(404, `Flight ${flightId} does not exist; use a flightId returned by search_flights.`);
    }
    const booking = tripServices.book('flight', ctx.idempotencyKey, { flightId, passengers });
    return { bookingId: booking.id, flightId, passengers };
  }),
  cancelFlightContract.implement(async ({ originalKey }) => ({ cancelled: tripServices.cancel(originalKey) })),
  bookHotelContract.implement(async ({ city, nights, checkIn, room }, ctx) => {
    // The hotel API answers 503 to the first two attempts of every booking: the engine retries with jitter.
    if (ctx.attempt < 3) throw httpError(503, 'Hotel API: 503 Service Unavailable');
    const booking = tripServices.book('hotel', ctx.idempotencyKey, { city, nights, checkIn, room });
    return { bookingId: booking.id, city, nights };
  }),
  cancelHotelContract.implement(async ({ originalKey }) => ({ cancelled: tripServices.cancel(originalKey) })),
  payContract.implement(async ({ amountEur, reference }, ctx) => {
    if (amountEur > CARD_LIMIT_EUR) {
      throw httpError(402, `Card declined: ${amountEur} EUR is over the card's limit of ${CARD_LIMIT_EUR} EUR.`);
    }
    const payment = tripServices.book('payment', ctx.idempotencyKey, { amountEur, reference });
    return { paymentId: payment.id, amountEur };
  }),
];
