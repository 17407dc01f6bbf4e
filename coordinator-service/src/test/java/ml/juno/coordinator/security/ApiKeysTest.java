package ml.juno.coordinator.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiKeysTest {

    @Test
    void parse_namedAndUnnamedKeys_commentsAndBlanksSkipped() {
        ApiKeys keys = ApiKeys.parse("# team keys\nalice:sk-alice-0123456789\n\n  sk-anon-abcdefgh  \n", false, "keys.txt");
        assertEquals(2, keys.size());
        assertEquals("alice", keys.names().get(0));
        assertTrue(keys.names().get(1).matches("key-[0-9a-f]{8}"), keys.names().toString());
        assertEquals(Optional.of("alice"), keys.nameOf("sk-alice-0123456789"));
        assertEquals(Optional.of(keys.names().get(1)), keys.nameOf("sk-anon-abcdefgh"));
        assertEquals(Optional.empty(), keys.nameOf("sk-alice-012345678"), "a prefix is not the key");
        assertEquals(Optional.empty(), keys.nameOf("sk-alice-01234567890"), "nor is a longer one");
        assertEquals(Optional.empty(), keys.nameOf(""));
        assertEquals(Optional.empty(), keys.nameOf(null));
        assertFalse(keys.toString().contains("sk-"), "toString names, never keys: " + keys);
    }

    @Test
    void parse_environmentForm_commaSeparated() {
        ApiKeys keys = ApiKeys.parse("a:key-aaaaaaaa,b:key-bbbbbbbb", true, "JUNO_API_KEYS");
        assertEquals(List.of("a", "b"), keys.names());
    }

    @Test
    void parse_badEntries_nameTheEntryNeverTheKey() {
        IllegalArgumentException shortKey = assertThrows(IllegalArgumentException.class, () -> ApiKeys.parse("x:short", false, "f"));
        assertEquals("f: entry 1 has a key shorter than 8 characters", shortKey.getMessage());
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
                () -> ApiKeys.parse("x:aaaaaaaaaa\nx:bbbbbbbbbb", false, "f"));
        assertTrue(dup.getMessage().contains("'x' is used twice"), dup.getMessage());
        IllegalArgumentException space = assertThrows(IllegalArgumentException.class, () -> ApiKeys.parse("x:aaaa bbbbbbbb", false, "f"));
        assertFalse(space.getMessage().contains("aaaa"), space.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ApiKeys.parse("bad name:aaaaaaaaaa", false, "f"));
    }

    @Test
    void bearer_readsTheSchemeCaseInsensitively() {
        assertEquals("abc", ApiKeys.bearer("Bearer abc"));
        assertEquals("abc", ApiKeys.bearer("bearer   abc "));
        assertEquals(null, ApiKeys.bearer("Basic abc"));
        assertEquals(null, ApiKeys.bearer("Bearer "));
        assertEquals(null, ApiKeys.bearer(null));
    }

    @Test
    void ring_reloadsTheFile_aRemovedKeyStopsWorking(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("keys");
        Files.writeString(file, "alice:sk-alice-0123456789\nbob:sk-bob-0123456789\n");
        List<String> warnings = new ArrayList<>();
        ApiKeyRing ring = new ApiKeyRing(ApiKeys.parse("ops:sk-ops-0123456789", true, "env"), file, warnings::add);
        assertTrue(ring.required());
        assertEquals(Optional.of("bob"), ring.authenticate("Bearer sk-bob-0123456789"));
        assertEquals(Optional.of("ops"), ring.authenticate("Bearer sk-ops-0123456789"));
        Files.writeString(file, "alice:sk-alice-0123456789\n");
        Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 2000)); // a new stamp even on coarse clocks
        assertEquals(Optional.empty(), ring.authenticate("Bearer sk-bob-0123456789"), "revoked");
        assertEquals(Optional.of("alice"), ring.authenticate("Bearer sk-alice-0123456789"));
        Files.delete(file);
        assertEquals(Optional.empty(), ring.authenticate("Bearer sk-alice-0123456789"), "a missing file accepts none of its keys");
        assertEquals(Optional.of("ops"), ring.authenticate("Bearer sk-ops-0123456789"), "fixed keys stay");
        assertEquals(1, warnings.size(), warnings.toString());
        Files.writeString(file, "carol:sk-carol-0123456789\n");
        assertEquals(Optional.of("carol"), ring.authenticate("Bearer sk-carol-0123456789"), "back");
        Files.writeString(file, "carol:short\n");
        Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 4000));
        assertEquals(Optional.empty(), ring.authenticate("Bearer sk-carol-0123456789"), "a broken file fails closed");
        assertFalse(String.join("\n", warnings).contains("sk-"), warnings.toString());
    }

    @Test
    void ring_withoutKeys_isNotRequired_andAMissingFileIsAStartError(@TempDir Path dir) {
        assertFalse(new ApiKeyRing(ApiKeys.none(), null, w -> { }).required());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ApiKeyRing(ApiKeys.none(), dir.resolve("nope"), w -> { }));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }

    @Test
    void bindAddress_loopbackOrNot() {
        assertTrue(BindAddress.isLoopback("127.0.0.1"));
        assertTrue(BindAddress.isLoopback("::1"));
        assertTrue(BindAddress.isLoopback("localhost"));
        assertFalse(BindAddress.isLoopback("0.0.0.0"));
        assertFalse(BindAddress.isLoopback("::"));
        assertFalse(BindAddress.isLoopback(""));
    }
}
