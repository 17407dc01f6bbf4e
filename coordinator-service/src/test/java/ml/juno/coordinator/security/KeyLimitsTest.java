package ml.juno.coordinator.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class KeyLimitsTest {

    @Test
    void spec_parsesRequestsAndTokens_andNamesABadPart() {
        assertEquals(new RateLimitSpec(60, 200_000), RateLimitSpec.parse("60rpm,200000tpm"));
        assertEquals(new RateLimitSpec(0, 5000), RateLimitSpec.parse(" 5000TPM "));
        assertEquals(RateLimitSpec.NONE, RateLimitSpec.parse(""));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RateLimitSpec.parse("60rpm,10rps"));
        assertTrue(e.getMessage().contains("'10rps' is not Nrpm or Ntpm"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RateLimitSpec.parse("60rpm,61rpm"));
        assertThrows(IllegalArgumentException.class, () -> RateLimitSpec.parse("-1rpm"));
    }

    @Test
    void requests_perKey_refusedPastTheLimit_withAWaitWithinTheMinute() {
        KeyLimits limits = new KeyLimits(RateLimitSpec.parse("3rpm"));
        for (int i = 0; i < 3; i++) {
            assertTrue(limits.admit("alice", true).allowed(), "request " + i);
        }
        KeyLimits.Decision refused = limits.admit("alice", true);
        assertFalse(refused.allowed());
        assertTrue(refused.retryAfter().compareTo(Duration.ZERO) > 0 && refused.retryAfter().compareTo(Duration.ofMinutes(1)) <= 0,
                refused.retryAfter().toString());
        assertTrue(refused.limit().startsWith("requests per minute"), refused.limit());
        assertTrue(limits.admit("bob", true).allowed(), "another key has its own bucket");
    }

    @Test
    void tokens_chargedAfterwards_anEmptyBucketRefusesGenerationsOnly() {
        KeyLimits limits = new KeyLimits(RateLimitSpec.parse("100tpm"));
        assertTrue(limits.admit("alice", true).allowed());
        limits.charge("alice", 60);
        assertEquals(40, limits.tokensLeft("alice"));
        assertTrue(limits.admit("alice", true).allowed(), "40 left");
        limits.charge("alice", 250); // more than a minute's worth: debt
        assertTrue(limits.tokensLeft("alice") < 0, "in debt: " + limits.tokensLeft("alice"));
        KeyLimits.Decision refused = limits.admit("alice", true);
        assertFalse(refused.allowed());
        assertTrue(refused.limit().startsWith("tokens per minute"), refused.limit());
        assertTrue(refused.retryAfter().compareTo(Duration.ofSeconds(60)) > 0, "debt of more than a minute: " + refused.retryAfter());
        assertTrue(limits.admit("alice", false).allowed(), "a request that generates nothing still passes");
    }

    @Test
    void noLimits_admitsEverything() {
        KeyLimits limits = new KeyLimits(RateLimitSpec.NONE);
        assertFalse(limits.active());
        for (int i = 0; i < 1000; i++) {
            assertTrue(limits.admit("k", true).allowed());
        }
        limits.charge("k", 1_000_000);
    }
}
