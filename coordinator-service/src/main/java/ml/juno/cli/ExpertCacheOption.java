package ml.juno.cli;

import java.util.List;
import java.util.Map;
import ml.juno.engine.moe.ExpertBudget;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code --expert-cache SIZE}, shared by every command that runs a model: stream a mixture-of-experts model's routed
 * experts from the file through a RAM tier of SIZE instead of the memory map ({@code ml.juno.engine.moe}). In-process
 * commands {@link #applyToThisJvm apply} it as the system property {@value ExpertBudget#PROPERTY} before any model
 * loads; commands that start JVMs pass it on ({@link #properties}, {@link #args}). Unset: env
 * {@value ExpertBudget#ENV}, else memory-mapped. A bad value is a usage error (exit code 2); a bad inherited one a
 * one-line error (exit code 1) before anything starts. Dense models ignore it (one log line).
 */
final class ExpertCacheOption {

    @Option(names = "--expert-cache", paramLabel = "SIZE", converter = BudgetConverter.class,
            description = "MoE models: stream the routed experts from disk through a RAM cache of SIZE (0, 512MiB, 2GiB, "
                    + "or a share of all experts: 25%%) instead of memory-mapping them; logits are identical. "
                    + "Default: env JUNO_EXPERT_CACHE, else memory-mapped.")
    String size;

    /** The flag's value as given, or {@code null}. */
    String value() {
        return size;
    }

    void applyToThisJvm() {
        if (size != null) {
            System.setProperty(ExpertBudget.PROPERTY, size);
        } else {
            checkInherited();
        }
    }

    /** {@value ExpertBudget#PROPERTY} for a child app's JVM: the flag, else this JVM's property; empty when neither. */
    Map<String, String> properties() {
        String v = forChildren();
        return v == null ? Map.of() : Map.of(ExpertBudget.PROPERTY, v);
    }

    /** {@code --expert-cache VALUE} for a child {@code juno} command; empty when unset. */
    List<String> args() {
        String v = forChildren();
        return v == null ? List.of() : List.of("--expert-cache", v);
    }

    private String forChildren() {
        if (size != null) {
            return size;
        }
        checkInherited();
        return System.getProperty(ExpertBudget.PROPERTY);
    }

    private static void checkInherited() {
        try {
            ExpertBudget.requested();
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
    }

    /** {@link ExpertBudget#parse}'s message becomes the usage error. */
    static final class BudgetConverter implements ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                ExpertBudget.parse(value);
                return value.trim();
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
