package ml.juno.coordinator.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The keys a server accepts: fixed ones (from {@code --api-key} and {@code JUNO_API_KEYS}) plus those of a key file,
 * which is read again whenever its modification time, size or file identity change, so that a key removed from the
 * file stops working at the next request. Whether keys are required at all is decided once, at start: with a key file
 * or any fixed key, every protected request needs a key, even while the file is empty or missing (it then fails
 * closed: no file key is accepted until it is readable again).
 */
public final class ApiKeyRing {

    private record Stamp(long modified, long size, Object fileKey) {
    }

    private final ApiKeys fixed;
    private final Path file;
    private final Consumer<String> warn;
    private final boolean required;
    private volatile ApiKeys current;
    private volatile Stamp stamp;

    /**
     * @param file key file or null
     * @param warn where a reload problem is reported (one line, never a key)
     * @throws IllegalArgumentException the file cannot be read or parsed at start
     */
    public ApiKeyRing(ApiKeys fixed, Path file, Consumer<String> warn) {
        this.fixed = Objects.requireNonNull(fixed);
        this.file = file;
        this.warn = warn;
        this.required = file != null || !fixed.isEmpty();
        if (file != null) {
            try {
                Stamp s = stamp(file);
                this.current = fixed.plus(read(file));
                this.stamp = s;
            } catch (NoSuchFileException e) {
                throw new IllegalArgumentException("API key file " + file + " does not exist");
            } catch (IOException e) {
                throw new IllegalArgumentException("API key file " + file + " cannot be read: " + e.getMessage());
            }
        } else {
            this.current = fixed;
        }
    }

    /** Whether requests must present a key. */
    public boolean required() {
        return required;
    }

    /** The keys accepted now (the file re-read first if it changed). */
    public ApiKeys keys() {
        if (file != null) {
            refresh();
        }
        return current;
    }

    /** The name of the key in an {@code Authorization} header value, or empty when it is missing or not accepted. */
    public Optional<String> authenticate(String authorizationHeader) {
        String key = ApiKeys.bearer(authorizationHeader);
        return key == null ? Optional.empty() : keys().nameOf(key);
    }

    private void refresh() {
        Stamp now;
        try {
            now = stamp(file);
        } catch (IOException e) {
            now = null;
        }
        if (Objects.equals(now, stamp)) {
            return;
        }
        synchronized (this) {
            if (Objects.equals(now, stamp)) {
                return;
            }
            ApiKeys next = fixed;
            if (now == null) {
                warn.accept("API key file " + file + " is gone or unreadable; only the fixed keys are accepted until it is back");
            } else {
                try {
                    next = fixed.plus(read(file));
                } catch (IOException | IllegalArgumentException e) {
                    warn.accept("API key file " + file + " could not be reloaded (" + e.getMessage()
                            + "); only the fixed keys are accepted until it is fixed");
                }
            }
            current = next;
            stamp = now;
        }
    }

    private static ApiKeys read(Path file) throws IOException {
        return ApiKeys.parse(Files.readString(file, StandardCharsets.UTF_8), false, file.toString());
    }

    private static Stamp stamp(Path file) throws IOException {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        return new Stamp(a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS), a.size(), a.fileKey());
    }
}
