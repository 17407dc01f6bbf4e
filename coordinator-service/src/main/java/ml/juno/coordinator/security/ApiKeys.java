package ml.juno.coordinator.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * A set of API keys, each with a name for logs and metrics. Only SHA-256 digests of the keys are kept; a presented
 * key is digested and compared with every entry by {@link MessageDigest#isEqual} (constant time, and no early exit),
 * so neither the comparison nor the key's length tells an attacker how close a guess was.
 *
 * <p>Text form (a key file, {@code JUNO_API_KEYS}, {@code --api-key}): one entry per line (or comma-separated in the
 * environment), {@code name:key} or just {@code key}; blank lines and lines starting with {@code #} are skipped. A key
 * without a name is named {@code key-} and the first 8 hex digits of its SHA-256 (a fingerprint, not the key).
 */
public final class ApiKeys {

    /** One accepted key: its name and the SHA-256 of its bytes. */
    record Entry(String name, byte[] digest) {
    }

    private static final int MIN_LENGTH = 8;
    private static final ApiKeys NONE = new ApiKeys(List.of());

    private final List<Entry> entries;

    private ApiKeys(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    public static ApiKeys none() {
        return NONE;
    }

    /**
     * Parses entries separated by newlines (and commas when {@code commas}); {@code source} names where they came from
     * in error messages (never the key itself).
     *
     * @throws IllegalArgumentException an entry with an empty or too short key, or a name used twice
     */
    public static ApiKeys parse(String text, boolean commas, String source) {
        List<Entry> entries = new ArrayList<>();
        String[] lines = text.split(commas ? "[\\r\\n,]+" : "\\r?\\n|\\r");
        int lineNo = 0;
        for (String raw : lines) {
            lineNo++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int colon = line.indexOf(':');
            String name = colon > 0 ? line.substring(0, colon).strip() : null;
            String key = colon > 0 ? line.substring(colon + 1).strip() : line;
            if (key.length() < MIN_LENGTH) {
                throw new IllegalArgumentException(source + ": entry " + lineNo + " has a key shorter than " + MIN_LENGTH + " characters");
            }
            if (!key.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw new IllegalArgumentException(source + ": entry " + lineNo + " has a key with spaces or characters outside printable ASCII");
            }
            byte[] digest = sha256(key);
            if (name == null) {
                name = "key-" + HexFormat.of().formatHex(digest, 0, 4);
            }
            if (!name.matches("[A-Za-z0-9._@-]{1,64}")) {
                throw new IllegalArgumentException(source + ": entry " + lineNo + " has a name that is not 1-64 of [A-Za-z0-9._@-]");
            }
            for (Entry e : entries) {
                if (e.name().equals(name)) {
                    throw new IllegalArgumentException(source + ": the name '" + name + "' is used twice");
                }
            }
            entries.add(new Entry(name, digest));
        }
        return new ApiKeys(entries);
    }

    /** Both sets, {@code this} first; a name in both is an error. */
    public ApiKeys plus(ApiKeys other) {
        List<Entry> all = new ArrayList<>(entries);
        for (Entry e : other.entries) {
            if (all.stream().anyMatch(a -> a.name().equals(e.name()))) {
                throw new IllegalArgumentException("the key name '" + e.name() + "' is used twice");
            }
            all.add(e);
        }
        return new ApiKeys(all);
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    public int size() {
        return entries.size();
    }

    /** The names, in order (for a start-up line; never the keys). */
    public List<String> names() {
        return entries.stream().map(Entry::name).toList();
    }

    /**
     * The name of the key {@code presented}, or empty. Every entry is compared, whether or not an earlier one matched,
     * each in constant time over equal-length digests.
     */
    public Optional<String> nameOf(String presented) {
        if (presented == null || presented.isEmpty()) {
            return Optional.empty();
        }
        byte[] digest = sha256(presented);
        String found = null;
        for (Entry e : entries) {
            if (MessageDigest.isEqual(e.digest(), digest) && found == null) {
                found = e.name();
            }
        }
        return Optional.ofNullable(found);
    }

    /** The key of an {@code Authorization: Bearer KEY} header value, or null when it is not one. */
    public static String bearer(String header) {
        if (header == null) {
            return null;
        }
        String h = header.strip();
        if (h.length() < 7 || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String key = h.substring(7).strip();
        return key.isEmpty() ? null : key;
    }

    static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    @Override
    public String toString() {
        return "ApiKeys" + names(); // names only
    }
}
