package ml.juno.node.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * The one folder a node opens model files from ({@code --models-dir}, {@code juno.node.models-dir}). A requested path
 * (absolute, or relative to the folder) is resolved to its real path (symbolic links followed, {@code ..} gone) and
 * must be a regular file inside the folder's real path. Every refusal says the same thing, whether the file is
 * missing, outside, a directory or unreadable, so a caller learns nothing about paths it may not open.
 */
public final class ModelsDirectory {

    private final Path root; // real path, or null: no folder configured, nothing may be opened

    /** @param dir the folder, or null/blank when none is configured */
    public ModelsDirectory(String dir) {
        Path real = null;
        if (dir != null && !dir.isBlank()) {
            try {
                real = Path.of(dir.strip()).toRealPath();
                if (!Files.isDirectory(real)) {
                    throw new IllegalArgumentException("models directory " + dir + " is not a directory");
                }
            } catch (IOException | InvalidPathException e) {
                throw new IllegalArgumentException("models directory " + dir + " does not exist or cannot be read");
            }
        }
        this.root = real;
    }

    /** The folder's real path, or null. */
    public Path root() {
        return root;
    }

    /**
     * The real path of {@code requested} when it may be opened.
     *
     * @throws ModelPathException the same message for every refusal
     */
    public Path resolve(String requested) {
        if (root == null) {
            throw new ModelPathException("this node has no models directory; start it with --models-dir DIR (juno.node.models-dir)");
        }
        try {
            if (requested == null || requested.isBlank() || requested.indexOf('\0') >= 0) {
                throw refused(requested);
            }
            Path asked = Path.of(requested);
            Path candidate = asked.isAbsolute() ? asked : root.resolve(asked);
            Path real = candidate.toRealPath();
            if (!real.startsWith(root) || !Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS) || !Files.isReadable(real)) {
                throw refused(requested);
            }
            return real;
        } catch (IOException | InvalidPathException | SecurityException e) {
            throw refused(requested);
        }
    }

    private static ModelPathException refused(String requested) {
        String shown = requested == null ? "" : requested.length() > 200 ? requested.substring(0, 200) + "…" : requested;
        return new ModelPathException("model path '" + shown.replaceAll("\\p{Cntrl}", "?")
                + "' is not a readable model file inside this node's models directory");
    }

    /** A model path this node will not open. */
    public static final class ModelPathException extends RuntimeException {
        ModelPathException(String message) {
            super(message);
        }
    }
}
