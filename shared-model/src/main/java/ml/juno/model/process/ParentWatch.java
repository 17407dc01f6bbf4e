package ml.juno.model.process;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * With {@code juno.parent-pid} set ({@code juno cluster} sets it), the process (a node or the coordinator: both apps
 * index this jar's beans) exits when that process is gone.
 */
@ApplicationScoped
public class ParentWatch {

    @ConfigProperty(name = "juno.parent-pid")
    Optional<Long> parentPid;

    void onStart(@Observes StartupEvent ignored) {
        parentPid.flatMap(ProcessHandle::of).ifPresent(parent -> parent.onExit().thenRun(() -> {
            Logger.getLogger(ParentWatch.class).warnf("parent process %d is gone; stopping", parent.pid());
            Quarkus.asyncExit(0);
        }));
    }
}
