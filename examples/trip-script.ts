import type { ScriptedTurn } from '../src/model/scripted-model';

/**
 * The scripted model of the demo: it searches, books a flight (first with a type-drifted argument that
 * the engine refuses, then corrected), books a hotel through a flaky API, pays and answers.
 */
export const tripScript: ScriptedTurn[] = [
  {
    text: 'Looking for flights from Lisbon to Berlin.',
    toolCalls: [{ name: 'search_flights', arguments: '{"from":"LIS","to":"BER","date":"2026-12-18"}' }],
  },
  {
    text: 'FR2381 is the cheapest; booking it for two.',
    toolCalls: [{ name: 'book_flight', arguments: '{"flightId":"FR2381","passengers":"2"}' }],
  },
  {
    text: 'passengers must be a number; trying again.',
    toolCalls: [{ name: 'book_flight', arguments: '{"flightId":"FR2381","passengers":2}' }],
  },
  {
    text: 'Flight booked; now the hotel.',
    toolCalls: [
      { name: 'book_hotel', arguments: '{"city":"Berlin","checkIn":"2026-12-18","nights":3,"room":"double"}' },
    ],
  },
  {
    text: 'Everything is booked; paying.',
    toolCalls: [{ name: 'pay', arguments: { amountEur: 642, reference: 'trip-BER' } }],
  },
  { text: 'Your trip is booked: flight FR2381 for two, 3 nights in Berlin, paid 642 EUR.', final: true },
];

/**
 * The compensation scenario (`npm start -- --scenario compensation`): the same trip, but a suite that
 * the card cannot pay. The payment is critical, so its permanent failure aborts the run and the engine
 * cancels the hotel, then the flight (newest first).
 */
export const tripScriptDeclined: ScriptedTurn[] = [
  tripScript[0]!,
  {
    text: 'FR2381 is the cheapest; booking it for two.',
    toolCalls: [{ name: 'book_flight', arguments: '{"flightId":"FR2381","passengers":2}' }],
  },
  {
    text: 'Flight booked; now a suite.',
    toolCalls: [
      { name: 'book_hotel', arguments: '{"city":"Berlin","checkIn":"2026-12-18","nights":3,"room":"suite"}' },
    ],
  },
  { text: 'Paying.', toolCalls: [{ name: 'pay', arguments: { amountEur: 2140, reference: 'trip-BER' } }] },
  { text: 'Your trip is booked.', final: true },
];
