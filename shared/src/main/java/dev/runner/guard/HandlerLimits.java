package dev.runner.guard;

/** A handler's limits; 0 = unlimited. */
public record HandlerLimits(int concurrency, int ratePerMinute) {

    public static final HandlerLimits UNLIMITED = new HandlerLimits(0, 0);

    public HandlerLimits {
        if (concurrency < 0) {
            throw new IllegalArgumentException("concurrency < 0: " + concurrency);
        }
        if (ratePerMinute < 0) {
            throw new IllegalArgumentException("ratePerMinute < 0: " + ratePerMinute);
        }
    }
}
