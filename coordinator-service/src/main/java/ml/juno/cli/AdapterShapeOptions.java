package ml.juno.cli;

import java.util.List;
import ml.juno.engine.model.block.Projection;
import picocli.CommandLine.Option;

/** The shape of a LoRA adapter to train ({@code juno lora train} and the interactive {@code juno lora}). */
final class AdapterShapeOptions {

    @Option(names = "--targets", defaultValue = "q,v", description = "Projections to adapt: q,k,v,o,gate,up,down (default: ${DEFAULT-VALUE}).")
    String targets;

    @Option(names = "--rank", defaultValue = "8", description = "LoRA rank (default: ${DEFAULT-VALUE}).")
    int rank;

    @Option(names = "--alpha", defaultValue = "16", description = "LoRA alpha; scale alpha/rank (default: ${DEFAULT-VALUE}).")
    float alpha;

    @Option(names = "--rslora", description = "Scale alpha/sqrt(rank) (rank-stabilized LoRA).")
    boolean rsLora;

    /** The projections of {@code --targets}; a bad list is a one-line error. */
    List<Projection> projections() {
        try {
            return Projection.parseList(targets);
        } catch (IllegalArgumentException e) {
            throw new CliException("--targets: " + e.getMessage());
        }
    }
}
