package ml.juno.coordinator.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class StopStringMatcherTest {

    /** Feeds pieces, returns everything emitted, and whether it stopped. */
    private static String stream(StopStringMatcher m, String... pieces) {
        StringBuilder out = new StringBuilder();
        for (String p : pieces) {
            var r = m.feed(p, true);
            out.append(r.text());
            if (r.stopped()) {
                return out.append("|STOP").toString();
            }
        }
        return out.append(m.flush()).toString();
    }

    @Test
    void stopString_splitAcrossPiecesIsFoundAndNeverEmitted() {
        var m = new StopStringMatcher(List.of("###"));
        assertEquals("hello |STOP", stream(m, "hel", "lo #", "#", "# world"));
    }

    @Test
    void heldBackTail_isReleasedWhenItStopsMatching() {
        var m = new StopStringMatcher(List.of("END"));
        var r1 = m.feed("the E", true);
        assertEquals("the ", r1.text(), "a possible start of END is held back");
        var r2 = m.feed("N", true);
        assertEquals("", r2.text());
        var r3 = m.feed("D?", true);
        assertTrue(r3.stopped());
        assertEquals("", r3.text());
        assertEquals("END", r3.stopString());

        var m2 = new StopStringMatcher(List.of("END"));
        assertEquals("the ", m2.feed("the E", true).text());
        assertEquals("ENx", m2.feed("Nx", true).text(), "ENx can no longer become END");
    }

    @Test
    void earliestStopWins_andTextBeforeItIsEmitted() {
        var m = new StopStringMatcher(List.of("world", "lo w"));
        var r = m.feed("hello world", true);
        assertTrue(r.stopped());
        assertEquals("hel", r.text());
        assertEquals("lo w", r.stopString());
    }

    @Test
    void overlappingPrefixes_holdBackLongestCandidate() {
        var m = new StopStringMatcher(List.of("abab"));
        assertEquals("x", m.feed("xaba", true).text());
        var r = m.feed("b", true);
        assertTrue(r.stopped());
        assertEquals("", r.text());
        var m2 = new StopStringMatcher(List.of("abab"));
        assertEquals("x|STOP", stream(m2, "xa", "ba", "bab")); // earliest match: "x[abab]ab"
        var m3 = new StopStringMatcher(List.of("abab"));
        assertEquals("xabba|STOP", stream(m3, "xa", "bb", "aabab"));
    }

    @Test
    void withoutStopStrings_everythingPassesThrough() {
        var m = new StopStringMatcher(List.of());
        assertEquals("ab", m.feed("ab", true).text());
        assertFalse(m.stopped());
    }

    @Test
    void beforeMinTokens_completeStopIsLetThroughButPrefixStillHeld() {
        var m = new StopStringMatcher(List.of("STOP"));
        assertEquals("a STOP b ", m.feed("a STOP b ST", false).text());
        var r = m.feed("OP", true);
        assertTrue(r.stopped());
        assertEquals("", r.text());
    }

    @Test
    void flush_returnsHeldTextAtEndOfSequence() {
        var m = new StopStringMatcher(List.of("</s>"));
        assertEquals("done", m.feed("done</", true).text());
        assertEquals("</", m.flush());
    }

    @Test
    void feedAfterStop_isAnError() {
        var m = new StopStringMatcher(List.of("x"));
        m.feed("x", true);
        assertThrows(IllegalStateException.class, () -> m.feed("y", true));
        assertThrows(IllegalArgumentException.class, () -> new StopStringMatcher(List.of("")));
    }
}
