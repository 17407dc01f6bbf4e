package ml.juno.engine.lora;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.jfr.LoraTrainStepEvent;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The training run on stories260K: a checkpoint read back from its file continues bit for bit like the uninterrupted
 * run (with dropout, batches and validation on); the best validation adapter is the one kept; a batch's gradient is
 * the mean of its sequences'; dropout 0 is no dropout; one JFR event per step.
 */
class LoraTrainingRunTest {
    static GgufFile file;
    static CpuBackend backend;
    static LoraTrainer trainer;

    @TempDir
    Path dir;

    @BeforeAll
    static void open() throws Exception {
        file = GgufFile.open(LoraFixtures.model("stories260K.gguf"));
        backend = new CpuBackend(1);
        ModelConfig c = Architectures.forName(file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(file);
        trainer = new LoraTrainer(file, c, backend);
    }

    @AfterAll
    static void close() throws Exception {
        backend.close();
        file.close();
    }

    private static List<LoraTraining.Example> data(int n, int len, long seed) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        List<LoraTraining.Example> out = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            int[] t = new int[len + k % 3];
            t[0] = 1;
            for (int i = 1; i < t.length; i++) {
                t[i] = 3 + r.nextInt(400);
            }
            out.add(LoraTraining.Example.text(t));
        }
        return out;
    }

    private static LoraAdapter fresh() {
        return LoraTrainer.init(BaseFingerprint.of(file), List.of(Projection.Q, Projection.V, Projection.DOWN), 4, 8f, false, 11,
                Map.of("lr", "5e-3"));
    }

    private static void assertSameAdapter(LoraAdapter a, LoraAdapter b) {
        for (LoraPair p : a.pairs()) {
            assertArrayEquals(p.a(), b.pair(p.layer(), p.target()).a(), "A of " + p.layer() + " " + p.target());
            assertArrayEquals(p.b(), b.pair(p.layer(), p.target()).b(), "B of " + p.layer() + " " + p.target());
        }
    }

    @Test
    void aRunCarryingAnEarlierRunsAdamState_goesOnFromItsMoments() throws Exception {
        List<LoraTraining.Example> one = data(1, 14, 5);
        float lr = 5e-3f;
        var two = new LoraTraining.Options(lr, 0.01f, 0, 2, 1f, 7); // rates lr, then lr/2 (cosine over two steps)
        LoraAdapter whole = fresh();
        new LoraTraining.Run(trainer, whole, one, List.of(), two).train(null, 0, null);
        // two one-step runs (rate lr, then two.rate(1)) carrying one AdamState are that two-step run bit for bit
        LoraAdapter carried = fresh();
        LoraTraining.AdamState state = LoraTraining.AdamState.fresh(carried);
        new LoraTraining.Run(trainer, carried, one, List.of(), new LoraTraining.Options(lr, 0.01f, 0, 1, 1f, 7), state).train(null, 0, null);
        assertEquals(1, state.updates());
        new LoraTraining.Run(trainer, carried, one, List.of(), new LoraTraining.Options(two.rate(1), 0.01f, 0, 1, 1f, 7), state)
                .train(null, 0, null);
        assertEquals(2, state.updates());
        assertSameAdapter(whole, carried);
        // with fresh moments the second step is another one
        LoraAdapter restarted = fresh();
        new LoraTraining.Run(trainer, restarted, one, List.of(), new LoraTraining.Options(lr, 0.01f, 0, 1, 1f, 7)).train(null, 0, null);
        new LoraTraining.Run(trainer, restarted, one, List.of(), new LoraTraining.Options(two.rate(1), 0.01f, 0, 1, 1f, 7)).train(null, 0, null);
        assertTrue(!java.util.Arrays.equals(LoraFile.encode(whole), LoraFile.encode(restarted)), "fresh moments give another adapter");
        var other = LoraTrainer.init(BaseFingerprint.of(file), List.of(Projection.Q), 4, 8f, false, 11, Map.of());
        assertThrows(IllegalArgumentException.class, () -> new LoraTraining.Run(trainer, other, one, List.of(),
                new LoraTraining.Options(lr, 0f, 0, 1, 1f, 7), state));
    }

    @Test
    void aCheckpointReadBackFromItsFile_continuesBitForBitLikeTheUninterruptedRun() throws Exception {
        List<LoraTraining.Example> train = data(5, 14, 1);
        List<LoraTraining.Example> val = data(2, 14, 2);
        var o = new LoraTraining.Options(5e-3f, 0.01f, 3, 13, 1f, 7, 0.1f, 32);
        List<LoraCheckpoint> seen = new ArrayList<>();
        List<Double> vals = new ArrayList<>();
        LoraTraining.Result whole = new LoraTraining.Run(trainer, fresh(), train, val, o).train(s -> {
            if (!Double.isNaN(s.valLoss())) {
                vals.add(s.valLoss());
            }
        }, 5, seen::add);
        assertEquals(2, seen.size(), "checkpoints at steps 5 and 10");
        assertTrue(vals.size() >= 3, "validation each epoch and at the end: " + vals);
        assertEquals(vals.stream().mapToDouble(Double::doubleValue).min().orElseThrow(), whole.bestValLoss());
        assertEquals(whole.bestValLoss(), LoraTraining.evaluate(trainer, whole.adapter(), val), "the kept adapter is the best one");

        Path ckpt = dir.resolve("a.lora.ckpt");
        seen.get(0).write(ckpt);
        LoraCheckpoint back = LoraCheckpoint.read(ckpt);
        assertEquals(5, back.steps());
        LoraTraining.Result resumed = LoraTraining.Run.resume(trainer, back, train, val, o).train(null, 5, c -> {});
        assertArrayEquals(whole.losses(), resumed.losses(), "the same losses");
        assertEquals(whole.bestValLoss(), resumed.bestValLoss());
        assertEquals(whole.bestStep(), resumed.bestStep());
        assertSameAdapter(whole.adapter(), resumed.adapter());
        assertArrayEquals(LoraFile.encode(whole.adapter()), LoraFile.encode(resumed.adapter()), "the same file");

        var other = new LoraTraining.Options(4e-3f, 0.01f, 3, 13, 1f, 7, 0.1f, 32);
        var e = assertThrows(IllegalArgumentException.class, () -> LoraTraining.Run.resume(trainer, back, train, val, other));
        assertTrue(e.getMessage().contains("lr 0.005") && e.getMessage().contains("0.004"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LoraTraining.Run.resume(trainer, back, data(5, 14, 9), val, o));
        assertTrue(e.getMessage().contains("train-data"), e.getMessage());
    }

    @Test
    void aDamagedCheckpoint_isRefusedNamingTheFile() throws Exception {
        List<LoraTraining.Example> train = data(2, 10, 3);
        var run = new LoraTraining.Run(trainer, fresh(), train, List.of(), new LoraTraining.Options(1e-3f, 0f, 0, 2, 1f, 1));
        run.train(null, 0, null);
        Path ckpt = dir.resolve("x.ckpt");
        run.checkpoint().write(ckpt);
        byte[] b = Files.readAllBytes(ckpt);
        assertTrue(LoraCheckpoint.isCheckpoint(ckpt));
        b[b.length / 2] ^= 1;
        Files.write(ckpt, b);
        IOException e = assertThrows(IOException.class, () -> LoraCheckpoint.read(ckpt));
        assertTrue(e.getMessage().contains("x.ckpt") && e.getMessage().contains("checksum"), e.getMessage());
        Files.write(ckpt, java.util.Arrays.copyOf(b, 40));
        e = assertThrows(IOException.class, () -> LoraCheckpoint.read(ckpt));
        assertTrue(e.getMessage().contains("x.ckpt"), e.getMessage());
        assertFalse(LoraCheckpoint.isCheckpoint(LoraFixtures.model("stories260K.gguf")));
    }

    @Test
    void aBatchOfTwo_isTheMeanOfTheirGradientsAndLosses() throws Exception {
        List<LoraTraining.Example> two = data(2, 12, 5);
        LoraAdapter a = LoraFixtures.random(file, List.of(Projection.Q, Projection.DOWN), 2, 4f, false, 3, 0.1f);
        int tokens = two.get(0).tokens().length + two.get(1).tokens().length;
        var run = new LoraTraining.Run(trainer, a, two, List.of(), new LoraTraining.Options(1e-3f, 0f, 0, 1, 0f, 1, 0f, tokens));
        LoraTrainer.Gradients batch = LoraTrainer.gradients(a);
        double loss = run.accumulate(two, 0, batch, new long[2]);
        LoraTrainer.Gradients g0 = LoraTrainer.gradients(a);
        LoraTrainer.Gradients g1 = LoraTrainer.gradients(a);
        double l0 = trainer.run(a, two.get(0).tokens(), two.get(0).mask(), g0, 1f);
        double l1 = trainer.run(a, two.get(1).tokens(), two.get(1).mask(), g1, 1f);
        assertEquals((l0 + l1) / 2, loss, 1e-12);
        for (LoraPair p : a.pairs()) {
            for (int which = 0; which < 2; which++) {
                float[] got = which == 0 ? batch.a(p) : batch.b(p);
                float[] x = which == 0 ? g0.a(p) : g0.b(p);
                float[] y = which == 0 ? g1.a(p) : g1.b(p);
                for (int i = 0; i < got.length; i++) {
                    float want = (x[i] + y[i]) / 2;
                    assertEquals(want, got[i], 1e-6f + 1e-4f * Math.abs(want), "pair " + p.layer() + " " + p.target() + " [" + i + "]");
                }
            }
        }
        List<LoraTraining.Step> steps = new ArrayList<>();
        run.train(steps::add, 0, null);
        assertEquals(1, steps.size());
        assertEquals(2, steps.get(0).sequences(), "both sequences in the one step");
        assertEquals(tokens, steps.get(0).tokens());
        assertEquals(loss, steps.get(0).loss(), 1e-12);
        assertEquals(2, LoraTraining.stepsOf(data(4, 12, 5), 1, 1, tokens + 1), "4 sequences, two a step");
        assertEquals(4, LoraTraining.stepsOf(data(4, 12, 5), 1, 1, 0));
    }

    @Test
    void dropout_zeroIsNone_otherwiseItChangesTraining_butNeverValidation() {
        List<LoraTraining.Example> train = data(3, 12, 8);
        LoraAdapter plain = fresh();
        LoraAdapter zero = fresh();
        LoraAdapter dropped = fresh();
        double[] lp = LoraTraining.train(trainer, plain, train, new LoraTraining.Options(5e-3f, 0f, 2, 6, 1f, 4), null);
        double[] lz = LoraTraining.train(trainer, zero, train, new LoraTraining.Options(5e-3f, 0f, 2, 6, 1f, 4, 0f, 0), null);
        double[] ld = LoraTraining.train(trainer, dropped, train, new LoraTraining.Options(5e-3f, 0f, 2, 6, 1f, 4, 0.3f, 0), null);
        assertArrayEquals(lp, lz);
        assertSameAdapter(plain, zero);
        assertNotEquals(lp[5], ld[5], "dropout changes the training");
        LoraAdapter a = LoraFixtures.random(file, List.of(Projection.V), 2, 4f, false, 3, 0.2f);
        var t = train.get(0);
        assertEquals(trainer.run(a, t.tokens(), t.mask(), null, 1f),
                trainer.run(a, t.tokens(), t.mask(), null, 1f, new LoraTrainer.Dropout(0f, 9)), "p = 0 is no dropout");
        assertNotEquals(trainer.run(a, t.tokens(), t.mask(), null, 1f),
                trainer.run(a, t.tokens(), t.mask(), null, 1f, new LoraTrainer.Dropout(0.5f, 9)));
        assertEquals(LoraTraining.evaluate(trainer, a, train), LoraTraining.evaluate(trainer, a, train), "validation has no dropout");
    }

    @Test
    void gradientsThroughDropout_matchFiniteDifferences() throws Exception {
        try (GgufFile f = GgufFile.open(LoraFixtures.model("tiny-llama-random-F32.gguf")); CpuBackend b = new CpuBackend(1)) {
            ModelConfig c = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f);
            LoraTrainer tr = new LoraTrainer(f, c, b);
            LoraAdapter a = LoraFixtures.random(f, List.of(Projection.Q, Projection.O, Projection.UP, Projection.DOWN), 2, 4f, false, 5, 0.2f);
            int[] tokens = {1, 403, 407, 261, 378, 9, 77};
            boolean[] mask = LoraTraining.Example.text(tokens).mask();
            var d = new LoraTrainer.Dropout(0.3f, 21);
            LoraTrainer.Gradients g = LoraTrainer.gradients(a);
            tr.run(a, tokens, mask, g, 1f, d);
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(2);
            for (LoraPair p : a.pairs()) {
                for (int which = 0; which < 2; which++) {
                    float[] param = which == 0 ? p.a() : p.b();
                    float[] grad = which == 0 ? g.a(p) : g.b(p);
                    float gmax = 0;
                    for (float v : grad) {
                        gmax = Math.max(gmax, Math.abs(v));
                    }
                    int i = rnd.nextInt(param.length);
                    float keep = param[i];
                    float h = 1e-2f;
                    param[i] = keep + h;
                    double up = tr.run(a, tokens, mask, null, 1f, d);
                    param[i] = keep - h;
                    double down = tr.run(a, tokens, mask, null, 1f, d);
                    param[i] = keep;
                    double fd = (up - down) / (2 * h);
                    double err = Math.abs(fd - grad[i]) / Math.max(Math.max(Math.abs(fd), Math.abs(grad[i])), 0.05 * gmax);
                    assertTrue(err < 2e-2, p.layer() + " " + p.target() + (which == 0 ? " A" : " B") + "[" + i + "]: analytic " + grad[i]
                            + ", finite difference " + fd);
                }
            }
        }
    }

    @Test
    void everyStep_isOneJfrEvent_withItsFigures() throws Exception {
        Path jfr = dir.resolve("train.jfr");
        List<LoraTraining.Step> steps = new ArrayList<>();
        assertFalse(LoraTrainStepEvent.enabled(), "off without a recording");
        try (Recording r = new Recording(jdk.jfr.Configuration.getConfiguration("default"))) {
            r.start();
            assertTrue(LoraTrainStepEvent.enabled(), "on in a default recording");
            new LoraTraining.Run(trainer, fresh(), data(2, 12, 4), data(1, 12, 6), new LoraTraining.Options(1e-3f, 0f, 0, 3, 1f, 1))
                    .train(steps::add, 0, null);
            r.stop();
            r.dump(jfr);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals(LoraTrainStepEvent.NAME)).toList();
        assertEquals(3, events.size(), "one event per step");
        for (int i = 0; i < 3; i++) {
            RecordedEvent e = events.get(i);
            LoraTraining.Step s = steps.get(i);
            assertEquals(i + 1, e.getInt("step"));
            assertEquals(s.tokens(), e.getInt("tokens"));
            assertEquals(s.loss(), e.getDouble("loss"));
            assertTrue(e.getDuration("forward").toNanos() > 0 && e.getDuration("backward").toNanos() > 0
                    && e.getDuration("optimizer").toNanos() > 0, e.toString());
            assertEquals(s.valLoss(), e.getDouble("validationLoss"), "NaN or the epoch's validation loss");
        }
        assertTrue(Double.isNaN(events.get(0).getDouble("validationLoss")), "mid-epoch: none");
        assertFalse(Double.isNaN(events.get(1).getDouble("validationLoss")), "epoch end: the validation loss");
    }
}
