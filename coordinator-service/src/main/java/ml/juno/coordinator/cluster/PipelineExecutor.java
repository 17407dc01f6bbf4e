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

    private StepResult nodeToNode(StepPlan plan) throws NodeFailure {
        StepBatch batch = batch(plan);
        List<RowDraw> draws = draws(plan);
        long deadline = System.nanoTime() + cluster.config().deadlines().step().toNanos();
        List<NodeLink> links = cluster.links();
        int n = links.size();
        ml.juno.node.v1.StepBatch first = ProtoMapping.toProto(batch);
        ml.juno.node.v1.StepBatch rest = n > 1 ? ProtoMapping.toProtoFromPeer(batch) : null;
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            ml.juno.node.v1.StepBatch wire = i == 0 ? first : rest;
            if (i == n - 1 && !draws.isEmpty()) {
                wire = ProtoMapping.withSamplers(wire, draws);
            }
            links.get(i).send(StepRequest.newBuilder().setBatch(wire).build());
        }
        StepOutput[] got = new StepOutput[n];
        long[] at = new long[n];
        NodeFailure dead = null;
        NodeFailure failed = null;
        for (int i = 0; i < n; i++) {
            try {
                got[i] = output(links.get(i), links.get(i).receive(deadline, plan.stepId()), plan.stepId());
                at[i] = System.nanoTime();
            } catch (NodeFailure e) {
                if (!e.nodeAlive() && dead == null) {
                    dead = e; // a stage whose stream broke is named before one that only waited for it
                } else if (failed == null) {
                    failed = e;
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
            // hop i: from the previous stage's answer (the send, for the first) to this one's: its wait for the rows, its compute
            links.get(i).recordHop(at[i] - (i == 0 ? t0 : at[i - 1]), got[i].getComputeNanos());
            links.get(i).recordReductions(0, got[i].getInputWaitNanos(), got[i].getPeerBytesSent());
        }
        return sample(links.get(n - 1), got[n - 1], plan, draws);
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
