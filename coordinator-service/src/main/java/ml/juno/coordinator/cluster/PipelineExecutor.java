package ml.juno.coordinator.cluster;

import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.Tensor;

/**
 * A pipeline of layer ranges: the batch goes to the first stage with token ids, each stage's hidden states go (through
 * the coordinator) to the next with the same rows, and the last stage answers the logits of the rows that need them.
 */
final class PipelineExecutor extends ClusterExecutor {

    PipelineExecutor(NodeCluster cluster, int vocab) {
        super(cluster, vocab);
    }

    @Override
    StepResult run(StepPlan plan) throws NodeFailure {
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
                return sample(link, o, plan);
            }
            if (!o.hasActivations()) {
                throw new NodeFailure(link, "node " + link.address + " answered step " + plan.stepId() + " without activations", true);
            }
            activations = o.getActivations();
        }
        throw new IllegalStateException("unreachable");
    }
}
