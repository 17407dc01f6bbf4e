package ml.juno.engine.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code --expert-cache}'s sizes: bytes with binary or decimal units, or a share of the tier that holds every expert. */
class ExpertBudgetTest {

    @Test
    void sizes_parseWithTheirUnits() {
        assertEquals(0, ExpertBudget.parse("0").resolve(1000));
        assertEquals(4096, ExpertBudget.parse("4096").resolve(1));
        assertEquals(512L << 20, ExpertBudget.parse("512MiB").resolve(1));
        assertEquals(2L << 30, ExpertBudget.parse(" 2GiB ").resolve(1));
        assertEquals(2L << 30, ExpertBudget.parse("2g").resolve(1));
        assertEquals(1_500_000_000L, ExpertBudget.parse("1.5GB").resolve(1));
        assertEquals(250, ExpertBudget.parse("25%").resolve(1000));
        assertEquals(1000, ExpertBudget.parse("100%").resolve(1000));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "lots", "-1", "2XB", "101%", "-5%", "GiB", "1.2.3"})
    void badSizes_areRefused_sayingWhatIsAccepted(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ExpertBudget.parse(text));
        assertTrue(e.getMessage().contains("bad expert cache size") && e.getMessage().contains("25%"), e.getMessage());
    }
}
