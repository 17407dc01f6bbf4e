package ml.juno.node.grpc;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import ml.juno.node.runtime.ModelsDirectory;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/** The node's {@link ModelsDirectory}, from {@code juno.node.models-dir} (env {@code JUNO_NODE_MODELS_DIR}). */
@ApplicationScoped
public class ModelsDirectoryConfig {

    private static final Logger LOG = Logger.getLogger(ModelsDirectoryConfig.class);
    private final ModelsDirectory directory;

    ModelsDirectoryConfig(@ConfigProperty(name = "juno.node.models-dir") Optional<String> dir) {
        this.directory = new ModelsDirectory(dir.orElse(null));
        if (directory.root() == null) {
            LOG.warn("no models directory (--models-dir, juno.node.models-dir): this node will refuse every LoadShard");
        } else {
            LOG.infof("model files are opened only under %s", directory.root());
        }
    }

    public ModelsDirectory directory() {
        return directory;
    }
}
