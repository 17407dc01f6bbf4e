package ml.juno.engine.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import ml.juno.engine.jfr.ExpertStepEvent;
import ml.juno.engine.kernel.cpu.CpuBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A default JFR recording of a streamed model holds one {@code juno.ExpertStep} per forward step, with its traffic. */
class ExpertStepEventTest {

    @Test
    void everyStreamedStep_isOneEvent_withItsHitsMissesAndBytes(@TempDir Path tmp) throws Exception {
        Path jfr = tmp.resolve("experts.jfr");
        ExpertStats[] stats = new ExpertStats[1];
        try (Recording r = new Recording(Configuration.getConfiguration("default"))) {
            r.start();
            ExpertStreamingTest.run(ExpertStreamingTest.model("tiny-qwen3moe-random-Q8_0.gguf"), t -> new CpuBackend(1, null),
                    ExpertBudget.ofBytes(0), stats);
            r.stop();
            r.dump(jfr);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals(ExpertStepEvent.NAME)).toList();
        ExpertStats s = stats[0];
        assertEquals(s.traffic().steps(), events.size(), "one event per step");
        long rows = 0;
        long misses = 0;
        long bytes = 0;
        for (RecordedEvent e : events) {
            rows += e.getInt("rows");
            misses += e.getInt("misses");
            bytes += e.getLong("bytesRead");
            assertEquals(0, e.getInt("hits"), "budget 0: no hits");
            assertTrue(e.getInt("maxReadsInFlight") >= 1);
        }
        assertEquals(s.traffic().tokens(), rows);
        assertEquals(s.misses(), misses);
        assertEquals(s.traffic().bytesRead(), bytes);
    }
}
