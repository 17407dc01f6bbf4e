package ml.juno.coordinator.cluster;

import java.util.List;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.engine.sampling.RowDraw;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.Tensor;

/**
 * A pipeline of layer ranges. Node to node (the default): the coordinator sends the step's batch to every stage at once
 * (token ids to the first, the rows' positions and block tables to the others, the draws to the last), each stage
 * sends its output rows straight to the next stage over their own stream, and the last stage draws the tokens and
 * answers them (logits only for rows the coordinator must draw: a grammar, a scored prompt); every other stage answers
 * a short acknowledgement, so a stage that died is seen on its own stream. Through the coordinator
 * ({@code -Djuno.cluster.hub=true}, the old path, kept to compare): each stage's hidden states come back here and go
 * on to the next stage, and the last stage answers every logit row's logits.
 */
final class PipelineExecutor extends ClusterExecutor {

    PipelineExecutor(NodeCluster cluster, int vocab) {
        super(cluster, vocab);
    }

    @Override
    StepResult run(StepPlan plan) throws NodeFailure {
        return cluster.hub() ? throughCoordinator(plan) : nodeToNode(plan);
    }

    /**
     * Micro-batches per step ({@code -Djuno.cluster.micro-batches=N}, default 1): a step of several sequences is split
     * into up to N parts of whole sequences, sent one after the other, so that stage 1 computes part 0 while stage 0
     * computes part 1.
     */
    private final int microBatches = Math.max(1, Integer.getInteger("juno.cluster.micro-batches", 1));

    /**
     * Steps in flight at once: one per stage, node to node (the first stage starts a step while the next ones still
     * compute earlier steps of other sequences); one through the coordinator, or with {@code
     * -Djuno.cluster.steps-in-flight=1} (to compare).
     */
    @Override
    public int stepsInFlight() {
        int n = cluster.links().size();
        if (cluster.hub() || n < 2) {
            return 1;
        }
        return Math.max(1, Integer.getInteger("juno.cluster.steps-in-flight", n));
    }

    /** A step sent node to node and not answered yet: its parts, their draws, when it went and on which streams. */
    private record Sent(StepPlan plan, List<StepPlan> parts, List<List<RowDraw>> draws, long t0, long deadline, long[] streams) {}

    private final java.util.ArrayDeque<Sent> sent = new java.util.ArrayDeque<>();

    @Override
    void send(StepPlan plan) throws NodeFailure {
        if (cluster.hub()) {
            throw new IllegalStateException("the coordinator-hub path runs one step at a time");
        }
        sent.addLast(sendNodeToNode(plan));
    }

    @Override
    StepResult receive(StepPlan plan) throws NodeFailure {
        Sent s = sent.pollFirst();
        if (s == null || s.plan() != plan) {
            throw new IllegalStateException("step " + plan.stepId() + " is not the oldest step in flight");
        }
        return receiveNodeToNode(s);
    }

    /**
     * The oldest step's failure when its streams were reset since it went (a node went down, or another step's failure
     * reset them): known without the cluster's lock, which the health thread may hold for seconds while it dials a node
     * that is down. Null when it may still be answered.
     */
    @Override
    String staleFailure(StepPlan plan) {
        Sent s = sent.peekFirst();
        if (s == null || s.plan() != plan) {
            return null;
        }
        try {
            requireStreams(s);
            return null;
        } catch (NodeFailure e) {
            sent.pollFirst();
            return e.getMessage();
        }
    }

    @Override
    void forget(StepPlan plan) {
        sent.removeIf(s -> s.plan() == plan);
    }

    private StepResult nodeToNode(StepPlan plan) throws NodeFailure {
        return receiveNodeToNode(sendNodeToNode(plan));
    }

    private Sent sendNodeToNode(StepPlan plan) throws NodeFailure {
        List<StepPlan> parts = split(plan, microBatches);
        int k = parts.size();
        List<NodeLink> links = cluster.links();
        int n = links.size();
        long deadline = System.nanoTime() + cluster.config().deadlines().step().toNanos();
        List<List<RowDraw>> draws = new java.util.ArrayList<>(k);
        long t0 = System.nanoTime();
        long[] streams = new long[n];
        for (int i = 0; i < n; i++) {
            streams[i] = links.get(i).streamGeneration();
        }
        for (int m = 0; m < k; m++) {
            StepBatch batch = batch(parts.get(m));
            List<RowDraw> d = draws(parts.get(m));
            draws.add(d);
            ml.juno.node.v1.StepBatch first = ProtoMapping.microBatch(ProtoMapping.toProto(batch), m);
            ml.juno.node.v1.StepBatch rest = n > 1 ? ProtoMapping.microBatch(ProtoMapping.toProtoFromPeer(batch), m) : null;
            for (int i = 0; i < n; i++) {
                ml.juno.node.v1.StepBatch wire = i == 0 ? first : rest;
                if (i == n - 1 && !d.isEmpty()) {
                    wire = ProtoMapping.withSamplers(wire, d);
                }
                links.get(i).send(StepRequest.newBuilder().setBatch(wire).build());
            }
        }
        return new Sent(plan, parts, draws, t0, deadline, streams);
    }

    /**
     * Fails at once a step whose streams were reset since it was sent: its answers will never come. A link that went down
     * names its node; a survivor's stream reset by another step's failure makes this step fail with that reason.
     */
    private void requireStreams(Sent s) throws NodeFailure {
        List<NodeLink> links = cluster.links();
        for (int i = 0; i < links.size(); i++) {
            NodeLink l = links.get(i);
            if (l.streamGeneration() != s.streams()[i] && !l.isUp()) {
                throw new NodeFailure(l, "node " + l.address + " is down: " + l.downReason());
            }
        }
        for (int i = 0; i < links.size(); i++) {
            if (links.get(i).streamGeneration() != s.streams()[i]) {
                throw NodeFailure.staleStream(links.get(i), "step " + s.plan().stepId() + " was in flight when the step streams were reset ("
                        + cluster.lastReset() + ")");
            }
        }
    }

    private StepResult receiveNodeToNode(Sent s) throws NodeFailure {
        requireStreams(s);
        StepPlan plan = s.plan();
        List<StepPlan> parts = s.parts();
        List<List<RowDraw>> draws = s.draws();
        int k = parts.size();
        List<NodeLink> links = cluster.links();
        int n = links.size();
        long deadline = s.deadline();
        long t0 = s.t0();
        StepOutput[][] got = new StepOutput[n][k];
        long[] at = new long[n];
        NodeFailure dead = null;
        NodeFailure failed = null;
        // a dead stage ends the wait: the later stages' answers only say they waited for it (and a later stage that
        // started this step after the death, another step in flight before it, waits for its rows until its timeout)
        for (int i = 0; i < n && dead == null; i++) {
            for (int m = 0; m < k; m++) {
                try {
                    got[i][m] = output(links.get(i), links.get(i).receive(deadline, plan.stepId()), plan.stepId());
                    at[i] = System.nanoTime();
                } catch (NodeFailure e) {
                    if (!e.nodeAlive() && dead == null) {
                        dead = e; // a stage whose stream broke is named before one that only waited for it
                    } else if (failed == null) {
                        failed = e;
                    }
                    break; // its stream holds nothing more for this step that matters
                }
            }
        }
        if (dead != null) {
            throw dead;
        }
        if (failed != null) {
            throw failed;
        }
        for (int i = 0; i < n; i++) {
            // hop i: from the previous stage's (last) answer (the send, for the first) to this one's: its waits for rows, its compute
            long compute = 0;
            long wait = 0;
            long bytes = 0;
            for (int m = 0; m < k; m++) {
                compute += got[i][m].getComputeNanos();
                wait += got[i][m].getInputWaitNanos();
                bytes += got[i][m].getPeerBytesSent();
            }
            links.get(i).recordHop(at[i] - (i == 0 ? t0 : at[i - 1]), compute);
            links.get(i).recordReductions(0, wait, bytes);
        }
        if (k == 1) {
            return sample(links.get(n - 1), got[n - 1][0], plan, draws.getFirst());
        }
        List<StepResult.Tokens> results = new java.util.ArrayList<>(k);
        for (int m = 0; m < k; m++) {
            StepResult r = sample(links.get(n - 1), got[n - 1][m], parts.get(m), draws.get(m));
            results.add(copy((StepResult.Tokens) r)); // the sampling stage reuses its arrays for the next part
        }
        return join(plan, parts, results);
    }

    /** Up to {@code k} parts of whole sequences, in plan order, of about equal token counts; the plan itself for one. */
    static List<StepPlan> split(StepPlan plan, int k) {
        int rows = plan.rows().size();
        if (k <= 1 || rows <= 1) {
            return List.of(plan);
        }
        k = Math.min(k, rows);
        int total = plan.totalTokens();
        List<StepPlan> parts = new java.util.ArrayList<>(k);
        int from = 0;
        int tokens = 0;
        for (int r = 0; r < rows; r++) {
            tokens += plan.rows().get(r).tokenCount();
            int left = rows - r - 1;
            int partsLeft = k - parts.size() - 1;
            boolean full = (long) tokens * k >= (long) total * (parts.size() + 1);
            if (partsLeft > 0 && (full || left == partsLeft) && left >= partsLeft) {
                parts.add(new StepPlan(plan.stepId(), plan.rows().subList(from, r + 1)));
                from = r + 1;
            }
        }
        parts.add(new StepPlan(plan.stepId(), plan.rows().subList(from, rows)));
        return parts;
    }

    private static StepResult.Tokens copy(StepResult.Tokens t) {
        float[] h = java.util.Arrays.copyOf(t.hidden().data(), t.hidden().rows() * t.hidden().dim());
        return new StepResult.Tokens(java.util.Arrays.copyOf(t.tokenIds(), t.rows()), java.util.Arrays.copyOf(t.logprobs(), t.rows()),
                java.util.Arrays.copyOf(t.failures(), t.rows()), t.rows(), t.scores(),
                t.hidden().rows() == 0 ? StepResult.Hidden.NONE : new StepResult.Hidden(h, t.hidden().rows(), t.hidden().dim()));
    }

    /** The parts' results as the whole plan's: sampled rows, scores and hidden states in plan order. */
    private static StepResult.Tokens join(StepPlan plan, List<StepPlan> plans, List<StepResult.Tokens> parts) {
        int rows = 0;
        int hiddenRows = 0;
        int dim = 0;
        boolean scored = false;
        for (StepResult.Tokens t : parts) {
            rows += t.rows();
            hiddenRows += t.hidden().rows();
            dim = Math.max(dim, t.hidden().dim());
            scored |= t.scores() != null;
        }
        int[] ids = new int[rows];
        var lps = new ml.juno.coordinator.sampling.TokenLogprobs[rows];
        String[] failures = new String[rows];
        var scores = scored ? new ml.juno.coordinator.sampling.TokenLogprobs[plan.rows().size()][] : null;
        float[] hidden = new float[hiddenRows * dim];
        int s = 0;
        int r = 0;
        int h = 0;
        for (int m = 0; m < parts.size(); m++) {
            StepResult.Tokens t = parts.get(m);
            System.arraycopy(t.tokenIds(), 0, ids, s, t.rows());
            System.arraycopy(t.logprobs(), 0, lps, s, t.rows());
            System.arraycopy(t.failures(), 0, failures, s, t.rows());
            s += t.rows();
            int partRows = plans.get(m).rows().size();
            if (scores != null && t.scores() != null) {
                System.arraycopy(t.scores(), 0, scores, r, partRows);
            }
            System.arraycopy(t.hidden().data(), 0, hidden, h, t.hidden().rows() * t.hidden().dim());
            h += t.hidden().rows() * t.hidden().dim();
            r += partRows;
        }
        return new StepResult.Tokens(ids, lps, failures, rows, scores,
                hiddenRows == 0 ? StepResult.Hidden.NONE : new StepResult.Hidden(hidden, hiddenRows, dim));
    }

    private StepResult throughCoordinator(StepPlan plan) throws NodeFailure {
        StepBatch batch = batch(plan);
        long deadline = System.nanoTime() + cluster.config().deadlines().step().toNanos();
        Tensor activations = null;
        var links = cluster.links();
        for (NodeLink link : links) {
            var wire = link.index == 0 ? ProtoMapping.toProto(batch) : ProtoMapping.toProto(batch, activations);
            long t0 = System.nanoTime();
            link.send(StepRequest.newBuilder().setBatch(wire).build());
            StepOutput o = output(link, link.receive(deadline, plan.stepId()), plan.stepId());
            link.recordHop(System.nanoTime() - t0, o.getComputeNanos());
            if (link.index == links.size() - 1) {
                return sample(link, o, plan, List.of());
            }
            if (!o.hasActivations()) {
                throw new NodeFailure(link, "node " + link.address + " answered step " + plan.stepId() + " without activations", true);
            }
            activations = o.getActivations();
        }
        throw new IllegalStateException("unreachable");
    }
}
