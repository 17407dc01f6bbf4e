package ml.juno.coordinator.cluster;

import java.util.List;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.ReducePart;
import ml.juno.node.v1.ReduceResult;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;

/**
 * Tensor parallelism: the batch goes to every rank; each all-reduce of the step arrives as one partial per rank, the
 * coordinator sums them in rank order and sends the sum back on every stream (it is the hub; a ring between nodes is
 * not built); rank 0 answers the logits.
 */
final class TensorParallelExecutor extends ClusterExecutor {
    private final ActivationCodec codec;
    private float[] sum = new float[0];
    private float[] part = new float[0];
    private volatile long reductions;

    TensorParallelExecutor(NodeCluster cluster, int vocab, ActivationCodec codec) {
        super(cluster, vocab);
        this.codec = codec;
    }

    @Override
    StepResult run(StepPlan plan) throws NodeFailure {
        StepRequest request = StepRequest.newBuilder().setBatch(ProtoMapping.toProto(batch(plan))).build();
        long deadline = System.nanoTime() + cluster.config().deadlines().step().toNanos();
        long t0 = System.nanoTime();
        List<NodeLink> links = cluster.links();
        for (NodeLink link : links) {
            link.send(request);
        }
        int n = links.size();
        StepResponse[] got = new StepResponse[n];
        for (int index = 0; ; index++) {
            int outputs = 0;
            for (int i = 0; i < n; i++) {
                got[i] = links.get(i).receive(deadline, plan.stepId());
                if (got[i].hasOutput()) {
                    outputs++;
                    StepOutput o = got[i].getOutput();
                    if (!o.getError().isEmpty()) {
                        throw new NodeFailure(links.get(i), "node " + links.get(i).address + ": " + o.getError(), true);
                    }
                }
            }
            if (outputs == n) {
                long wall = System.nanoTime() - t0;
                for (int i = 0; i < n; i++) {
                    links.get(i).recordHop(wall, got[i].getOutput().getComputeNanos());
                }
                return sample(links.get(0), got[0].getOutput(), plan);
            }
            if (outputs != 0) {
                throw new NodeFailure(null, "tensor-parallel ranks disagree on the number of all-reduces in step " + plan.stepId(), true);
            }
            reduce(links, got, index, plan.stepId());
        }
    }

    /** Sums the ranks' partials of all-reduce {@code index} in rank order and sends the sum to every rank. */
    private void reduce(List<NodeLink> links, StepResponse[] parts, int index, long stepId) throws NodeFailure {
        ReducePart first = parts[0].getPartial();
        int rows = ProtoMapping.rows(first.getPartial());
        int cols = ProtoMapping.cols(first.getPartial());
        int size = rows * cols;
        if (sum.length < size) {
            sum = new float[size];
            part = new float[size];
        }
        for (int i = 0; i < parts.length; i++) {
            ReducePart p = parts[i].getPartial();
            if (p.getStepId() != stepId || p.getIndex() != index
                    || ProtoMapping.rows(p.getPartial()) != rows || ProtoMapping.cols(p.getPartial()) != cols) {
                throw new NodeFailure(links.get(i), "node " + links.get(i).address + " sent all-reduce " + p.getIndex() + " of step "
                        + p.getStepId() + " shaped " + p.getPartial().getShapeList() + ", expected " + index + " of " + stepId, true);
            }
            ProtoMapping.decode(p.getPartial(), i == 0 ? sum : part, 0);
            if (i > 0) {
                for (int k = 0; k < size; k++) {
                    sum[k] += part[k];
                }
            }
        }
        StepRequest reply = StepRequest.newBuilder().setReduced(ReduceResult.newBuilder().setStepId(stepId).setIndex(index)
                .setSum(ProtoMapping.encode(codec, sum, 0, rows, cols))).build();
        for (NodeLink link : links) {
            link.send(reply);
        }
        reductions++;
    }

    @Override
    long reductions() {
        return reductions;
    }
}
