package dev.runner.guard;

/** A handler's limits; 0 = unlimited. */
public record ConcurrencyAndRate(int concurrency, int ratePerMinute) {

    public static final ConcurrencyAndRate UNLIMITED = new ConcurrencyAndRate(0, 0);

    public ConcurrencyAndRate {
        if (concurrency < 0) {
            throw new IllegalArgumentException("concurrency < 0: " + concurrency);
        }
        if (ratePerMinute < 0) {
            throw new IllegalArgumentException("ratePerMinute < 0: " + ratePerMinute);
        }
    }
}
