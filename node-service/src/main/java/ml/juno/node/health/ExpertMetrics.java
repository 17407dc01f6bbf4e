package ml.juno.node.health;

import io.micrometer.core.instrument.binder.MeterBinder;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import ml.juno.model.metrics.ExpertMeters;

/** Exports the streamed-expert metrics ({@link ExpertMeters}) of this process in {@code /q/metrics}. */
public class ExpertMetrics {

    @Produces
    @Singleton
    MeterBinder expertMeters() {
        return new ExpertMeters();
    }
}
