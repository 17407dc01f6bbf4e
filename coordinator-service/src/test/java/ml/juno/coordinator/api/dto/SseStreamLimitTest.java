package ml.juno.coordinator.api.dto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.helpers.test.AssertSubscriber;
import java.util.concurrent.atomic.AtomicBoolean;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.scheduler.Usage;
import org.junit.jupiter.api.Test;

/** A client that takes no frames is cut off after a bound; one that keeps reading never is. */
class SseStreamLimitTest {

    static final ObjectMapper JSON = new ObjectMapper();

    static SseStream stream(int max) {
        return new SseStream(new ChunkFormat(JSON, null, false, "cmpl-1", 7, "m", "fp"), false, 1, false, max).open();
    }

    @Test
    void aClientThatReadsNothing_isCutOffAtTheBound_andItsGenerationCancelled() {
        SseStream s = stream(16);
        AtomicBoolean cancelled = new AtomicBoolean();
        AssertSubscriber<String> client = s.frames(() -> cancelled.set(true)).subscribe().withSubscriber(AssertSubscriber.create(0));
        for (int i = 0; i < 16; i++) {
            s.onToken(0, i, "x", null);
        }
        assertThrows(SseStream.SlowClientException.class, () -> s.onToken(0, 17, "x", null)); // the output thread cancels on this
        assertTrue(s.cutOff());
        s.onToken(0, 18, "x", null); // later calls are dropped, nothing more is buffered
        s.onChoiceFinished(0, FinishReason.CANCELLED, new Usage(1, 17, 0), "");
        s.onFinished(new Usage(1, 17, 0));
        client.request(100);
        assertEquals(16, client.getItems().size(), "only the frames within the bound were ever buffered");
        client.assertFailedWith(SseStream.SlowClientException.class, "the client stopped reading: 16 frames unread");
    }

    @Test
    void aClientThatKeepsReading_getsEveryFrameWhateverTheLength() {
        SseStream s = stream(16);
        AssertSubscriber<String> client = s.frames(() -> { }).subscribe().withSubscriber(AssertSubscriber.create(Long.MAX_VALUE));
        for (int i = 0; i < 10_000; i++) {
            s.onToken(0, i, "x", null);
        }
        s.onChoiceFinished(0, FinishReason.LENGTH, new Usage(1, 10_000, 0), "");
        s.onFinished(new Usage(1, 10_000, 0));
        client.assertCompleted();
        assertEquals(10_002, client.getItems().size()); // tokens, the finish chunk, [DONE]
    }
}
