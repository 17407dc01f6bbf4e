package ml.juno.coordinator.cluster;

import java.util.List;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;

/**
 * Tensor parallelism: the batch goes to every rank (a few hundred bytes: cheaper than rank 0 forwarding it, which
 * would put a hop in front of every other rank's step); the ranks all-reduce their partial sums with each other over
 * their own streams (the coordinator only told them each other's addresses at load); every rank answers, rank 0 with
 * the tokens it drew (and the logits of rows the coordinator draws). A rank whose stream broke is named as the failure before one that only reports its peer gone.
 */
final class TensorParallelExecutor extends ClusterExecutor {

    TensorParallelExecutor(NodeCluster cluster, int vocab) {
        super(cluster, vocab);
    }

    @Override
    StepResult run(StepPlan plan) throws NodeFailure {
        ml.juno.node.v1.StepBatch wire = ProtoMapping.toProto(batch(plan));
        StepRequest request = StepRequest.newBuilder().setBatch(wire).build();
        List<ml.juno.engine.sampling.RowDraw> draws = draws(plan);
        long deadline = System.nanoTime() + cluster.config().deadlines().step().toNanos();
        long t0 = System.nanoTime();
        List<NodeLink> links = cluster.links();
        for (NodeLink link : links) { // rank 0 has the logits: it draws the tokens
            link.send(link.index == 0 && !draws.isEmpty() ? StepRequest.newBuilder().setBatch(ProtoMapping.withSamplers(wire, draws)).build()
                    : request);
        }
        int n = links.size();
        StepOutput[] got = new StepOutput[n];
        NodeFailure dead = null;
        NodeFailure failed = null;
        for (int i = 0; i < n; i++) {
            try {
                got[i] = output(links.get(i), links.get(i).receive(deadline, plan.stepId()), plan.stepId());
            } catch (NodeFailure e) {
                if (!e.nodeAlive() && dead == null) {
                    dead = e;
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
        long wall = System.nanoTime() - t0;
        for (int i = 0; i < n; i++) {
            if (got[i].getReductions() != got[0].getReductions()) {
                throw new NodeFailure(null, "tensor-parallel ranks disagree on the number of all-reduces in step " + plan.stepId()
                        + ": " + got[0].getReductions() + " on rank 0, " + got[i].getReductions() + " on rank " + i, true);
            }
            links.get(i).recordHop(wall, got[i].getComputeNanos());
            links.get(i).recordReductions(got[i].getReductions(), got[i].getReduceNanos(), got[i].getPeerBytesSent());
        }
        return sample(links.get(0), got[0], plan, draws);
    }
}
