package ml.juno.model.process;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * With {@code juno.parent-pid} set ({@code juno cluster}, {@code juno local} and {@code juno bench --nodes} set it),
 * the process (a node or the coordinator: both apps index this jar's beans) exits when that process is gone, or at
 * once if it was gone before this one finished starting (a launcher stopped while its children started).
 */
@ApplicationScoped
public class ParentWatch {

    @ConfigProperty(name = "juno.parent-pid")
    Optional<Long> parentPid;

    void onStart(@Observes StartupEvent ignored) {
        parentPid.ifPresent(pid -> watch(pid, () -> {
            Logger.getLogger(ParentWatch.class).warnf("parent process %d is gone; stopping", pid);
            Quarkus.asyncExit(0);
        }));
    }

    /**
     * Runs {@code exit} once process {@code pid} is gone: now (on this thread) if it is gone already, else when it
     * exits.
     */
    static void watch(long pid, Runnable exit) {
        ProcessHandle.of(pid).map(ProcessHandle::onExit).orElse(CompletableFuture.completedFuture(null)).thenRun(exit);
    }
}
