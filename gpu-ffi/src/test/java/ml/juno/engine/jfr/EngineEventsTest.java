package ml.juno.engine.jfr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.TestModels;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine's JFR events: off without a recording, and what a recording of real forward steps holds. */
class EngineEventsTest {
    private static final int[] PROMPT = {1, 403, 407, 261, 378};

    @TempDir
    Path tmp;

    @Test
    void withoutRecording_eventsAreDisabled() {
        assertFalse(ForwardPassEvent.enabled());
        assertFalse(MatMulEvent.enabled());
    }

    @Test
    void defaultRecording_hasForwardPassesButNoMatMuls() throws Exception {
        List<RecordedEvent> events = record(false, ShardSpec.whole(5));
        List<RecordedEvent> passes = named(events, ForwardPassEvent.NAME);
        assertEquals(2, passes.size(), "one event per forward step");
        assertEquals(PROMPT.length, passes.get(0).getInt("rows"));
        assertEquals(1, passes.get(1).getInt("rows"));
        for (RecordedEvent e : passes) {
            assertEquals(1, e.getInt("logitRows"));
            assertEquals(0, e.getInt("firstLayer"));
            assertEquals(5, e.getInt("endLayer"));
            assertEquals(1, e.getInt("tensorParts"));
            assertTrue(e.getDuration().toNanos() > 0);
        }
        assertTrue(named(events, MatMulEvent.NAME).isEmpty(), "juno.MatMul is off unless enabled explicitly");
        assertFalse(ForwardPassEvent.enabled(), "off again once the recording is closed");
    }

    @Test
    void matMulEnabled_recordsEveryProductOncePerStepWithItsShape() throws Exception {
        List<RecordedEvent> events = record(true, new ShardSpec(2, 5, 0, 1));
        List<RecordedEvent> passes = named(events, ForwardPassEvent.NAME);
        assertEquals(2, passes.size());
        assertEquals(1, passes.get(0).getInt("logitRows"), "the last shard computes logits");
        assertEquals(2, passes.get(0).getInt("firstLayer"));
        List<RecordedEvent> products = named(events, MatMulEvent.NAME);
        Map<String, Integer> perTensor = new HashMap<>();
        for (RecordedEvent e : products) {
            perTensor.merge(e.getString("tensor"), 1, Integer::sum);
            assertTrue(e.getString("backend").startsWith("cpu"), e.getString("backend"));
            assertTrue(e.getInt("rows") > 0 && e.getInt("cols") > 0);
            assertTrue(e.getInt("batch") == PROMPT.length || e.getInt("batch") == 1, "batch " + e.getInt("batch"));
            assertFalse(e.getString("type").isEmpty());
        }
        assertTrue(perTensor.keySet().stream().anyMatch(n -> n.startsWith("blk.2.")), perTensor.keySet().toString());
        assertFalse(perTensor.keySet().stream().anyMatch(n -> n.startsWith("blk.1.")), "layer 1 is not in this shard");
        // the nested, timed call must not be recorded a second time: each matrix is multiplied once per step
        perTensor.forEach((name, count) -> assertEquals(2, count, name));
    }

    /** Runs a prompt step and one decode step of a shard of stories260K under a recording. */
    private List<RecordedEvent> record(boolean matMul, ShardSpec shard) throws Exception {
        Path file = tmp.resolve("engine.jfr");
        EngineOptions o = new EngineOptions(2, 32, KvType.F32, 8, 1);
        try (GgufFile f = GgufFile.open(TestModels.dir().resolve("stories260K.gguf"));
             Model model = Model.load(f, o, shard, Backends::select);
             InferenceSession session = model.newSession();
             Recording recording = new Recording(Configuration.getConfiguration("default"))) {
            if (matMul) {
                recording.enable(MatMulEvent.NAME);
            }
            recording.start();
            assertTrue(ForwardPassEvent.enabled());
            assertEquals(matMul, MatMulEvent.enabled());
            StepBatch.Builder b = new StepBatch.Builder(8);
            b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
            session.forward(b.build());
            b.clear();
            b.add(0, PROMPT.length, 42, true);
            session.forward(b.build());
            recording.stop();
            recording.dump(file);
        }
        assertTrue(Files.size(file) > 0);
        return RecordingFile.readAllEvents(file);
    }

    private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).toList();
    }
}
