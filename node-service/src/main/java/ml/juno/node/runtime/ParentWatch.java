package ml.juno.node.runtime;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/** With {@code juno.parent-pid} set ({@code juno cluster} sets it), the node exits when that process is gone. */
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
