package ml.juno.coordinator.security;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Semaphore;

/**
 * At most {@code limit} generation requests (streamed or whole) of one key at once ({@code --max-concurrent-per-key});
 * one more is refused at the door, cheaply, instead of queueing behind the key's own work. A {@link Semaphore} per key
 * name; {@code 0} means no limit.
 */
public final class KeyConcurrency {

    private final int limit;
    private final ConcurrentMap<String, Semaphore> byKey = new ConcurrentHashMap<>();

    public KeyConcurrency(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("the concurrent request limit per key must be >= 0 (0: none), got " + limit);
        }
        this.limit = limit;
    }

    public int limit() {
        return limit;
    }

    public boolean active() {
        return limit > 0;
    }

    /** Takes one of {@code key}'s places; false when all are taken. Every true must be followed by one {@link #leave}. */
    public boolean tryEnter(String key) {
        return !active() || byKey.computeIfAbsent(key, k -> new Semaphore(limit)).tryAcquire();
    }

    /** Gives back the place a successful {@link #tryEnter} took. */
    public void leave(String key) {
        if (active()) {
            Semaphore s = byKey.get(key);
            if (s != null) {
                s.release();
            }
        }
    }

    /** Requests of {@code key} running now. */
    public int running(String key) {
        Semaphore s = byKey.get(key);
        return s == null ? 0 : limit - s.availablePermits();
    }
}
