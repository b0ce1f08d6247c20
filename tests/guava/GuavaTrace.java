/* GuavaTrace.java -- the real Guava RateLimiter (Debian's libguava-java) replaying a trace, for
 * tests/guava/run.sh, which compares it with RL.SMOOTH's algorithm bit for bit.
 *
 * It lives in Guava's package only to reach what Guava keeps package-private for its own tests: a
 * stopwatch the trace drives (RateLimiter.SleepingStopwatch), the constructors that take one, reserve(),
 * storedPermits and queryEarliestAvailable(). Nothing of Guava's is copied or changed.
 *
 * Input, one operation per line (times in µs, decimals as the module's clients write them):
 *   N t mode rate period_ms cold   a limiter fully rested at t: mode 1 SmoothBursty (maxBurstSeconds =
 *                                  period_ms / 1000, created long enough before t to have filled), mode 2
 *                                  RateLimiter.create(rate, period_ms, MILLISECONDS, cold, stopwatch)
 *   S t rate                       setRate(rate) at t
 *   A t permits timeout            at t: reserve(permits) when timeout < 0, else tryAcquire(permits,
 *                                  timeout, MICROSECONDS)
 * Output, one line per A: "allowed wait_us stored_bits next_free_us" (the state after the call). */
package com.google.common.util.concurrent;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.util.concurrent.TimeUnit;

public final class GuavaTrace {
    static final class TraceClock extends RateLimiter.SleepingStopwatch {
        long now;
        long slept;

        @Override
        protected long readMicros() {
            return now;
        }

        @Override
        protected void sleepMicrosUninterruptibly(long micros) {
            slept += micros;
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintWriter out = new PrintWriter(System.out);
        TraceClock clock = null;
        SmoothRateLimiter limiter = null;
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split(" ");
            long t = Long.parseLong(f[1]);
            switch (f[0]) {
                case "N": {
                    clock = new TraceClock();
                    double rate = Double.parseDouble(f[3]);
                    long periodMs = Long.parseLong(f[4]);
                    if (f[2].equals("1")) {
                        clock.now = t - periodMs * 1000 - 1000000; /* a full burst's time before t, and 1 s */
                        limiter = new SmoothRateLimiter.SmoothBursty(clock, periodMs / 1000.0);
                        limiter.setRate(rate);
                    } else {
                        clock.now = t;
                        limiter = (SmoothRateLimiter) RateLimiter.create(rate, periodMs, TimeUnit.MILLISECONDS,
                                Double.parseDouble(f[5]), clock);
                    }
                    clock.now = t;
                    break;
                }
                case "S":
                    clock.now = t;
                    limiter.setRate(Double.parseDouble(f[2]));
                    break;
                case "A": {
                    clock.now = t;
                    int permits = Integer.parseInt(f[2]);
                    long timeout = Long.parseLong(f[3]);
                    boolean allowed = true;
                    long waitUs;
                    if (timeout < 0) {
                        waitUs = limiter.reserve(permits);
                    } else {
                        clock.slept = 0;
                        allowed = limiter.tryAcquire(permits, timeout, TimeUnit.MICROSECONDS);
                        waitUs = clock.slept;
                    }
                    out.println((allowed ? 1 : 0) + " " + waitUs + " "
                            + Double.doubleToRawLongBits(limiter.storedPermits) + " "
                            + limiter.queryEarliestAvailable(t));
                    break;
                }
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
        out.flush();
    }
}
