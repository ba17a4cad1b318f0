/**
 * A tiny in-process stand-in for the airline, hotel and payment systems the demo tools talk to. Like a
 * real provider, it deduplicates writes by idempotency key, so a retried call returns the first booking.
 */
export interface Booking {
  id: string;
  kind: 'flight' | 'hotel' | 'payment';
  details: Record<string, unknown>;
  cancelled: boolean;
}

/** Demo downstream: bookings by idempotency key. */
export class TripServices {
  private readonly bookings = new Map<string, Booking>();
  private sequence = 0;

  /** Creates a booking once per key; later calls with the same key return the first one. */
  book(kind: Booking['kind'], key: string, details: Record<string, unknown>): Booking {
    const existing = this.bookings.get(key);
    if (existing) return existing;
    this.sequence += 1;
    const prefix = { flight: 'FL', hotel: 'HT', payment: 'PY' }[kind];
    const booking: Booking = {
      id: `${prefix}-${String(this.sequence).padStart(4, '0')}`,
      kind,
      details,
      cancelled: false,
    };
    this.bookings.set(key, booking);
    return booking;
  }

  /** Cancels whatever was booked under `key`; false when nothing was. Idempotent. */
  cancel(key: string): boolean {
    const booking = this.bookings.get(key);
    if (!booking) return false;
    booking.cancelled = true;
    return true;
  }

  all(): Booking[] {
    return [...this.bookings.values()];
  }
}
