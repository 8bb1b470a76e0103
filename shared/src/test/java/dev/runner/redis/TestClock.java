package dev.runner.redis;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand; script time comes from here, so windows and breakers run on it. */
public final class TestClock extends Clock {

    private final AtomicLong millis;

    public TestClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    /** Starts at a real time, so keys' PEXPIRE values stay realistic. */
    public static TestClock now() {
        return new TestClock(System.currentTimeMillis());
    }

    public void advance(Duration by) {
        millis.addAndGet(by.toMillis());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneOffset getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
        throw new UnsupportedOperationException("TestClock is UTC only");
    }
}
