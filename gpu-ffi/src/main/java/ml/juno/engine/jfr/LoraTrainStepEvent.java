package ml.juno.engine.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One optimizer step of LoRA training ({@code juno lora train}): the step (1-based), the sequences and tokens it
 * trained on, their mean loss, the learning rate, the gradient norm before clipping, and the time in the forward and
 * backward passes and in the optimizer; the validation loss when the step ended an epoch (NaN otherwise). Its duration
 * is the whole step.
 */
@Name(LoraTrainStepEvent.NAME)
@Label("LoRA Training Step")
@Category({"Juno", "Engine"})
@Description("One optimizer step of LoRA training")
@StackTrace(false)
public final class LoraTrainStepEvent extends Event {
    public static final String NAME = "juno.LoraTrainStep";

    private static final LoraTrainStepEvent PROBE = new LoraTrainStepEvent();

    @Label("Step")
    int step;

    @Label("Sequences")
    int sequences;

    @Label("Tokens")
    int tokens;

    @Label("Loss")
    double loss;

    @Label("Learning Rate")
    float learningRate;

    @Label("Gradient Norm")
    double gradNorm;

    @Label("Forward")
    @Timespan
    long forward;

    @Label("Backward")
    @Timespan
    long backward;

    @Label("Optimizer")
    @Timespan
    long optimizer;

    @Label("Validation Loss")
    @Description("NaN unless the step ended an epoch")
    double validationLoss;

    public static boolean enabled() {
        return PROBE.isEnabled();
    }

    /** A started event; call only when {@link #enabled()}. */
    public static LoraTrainStepEvent start() {
        LoraTrainStepEvent e = new LoraTrainStepEvent();
        e.begin();
        return e;
    }

    /** Ends the step and commits it with its figures (nanoseconds for the times). */
    public void finish(int step, int sequences, int tokens, double loss, float learningRate, double gradNorm,
                       long forwardNanos, long backwardNanos, long optimizerNanos, double validationLoss) {
        end();
        if (shouldCommit()) {
            this.step = step;
            this.sequences = sequences;
            this.tokens = tokens;
            this.loss = loss;
            this.learningRate = learningRate;
            this.gradNorm = gradNorm;
            this.forward = forwardNanos;
            this.backward = backwardNanos;
            this.optimizer = optimizerNanos;
            this.validationLoss = validationLoss;
            commit();
        }
    }
}
