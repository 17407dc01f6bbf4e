package ml.juno.node.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelsDirectoryTest {

    @Test
    void onlyRegularFilesInsideTheRealFolder_symlinksAndDotDotResolvedFirst(@TempDir Path tmp) throws Exception {
        Path models = Files.createDirectories(tmp.resolve("models"));
        Path outside = Files.writeString(tmp.resolve("secret.gguf"), "GGUF outside");
        Path inside = Files.writeString(models.resolve("m.gguf"), "GGUF inside");
        Files.createDirectories(models.resolve("sub"));
        Path nested = Files.writeString(models.resolve("sub/n.gguf"), "GGUF nested");
        Files.createSymbolicLink(models.resolve("link-out.gguf"), outside);
        Files.createSymbolicLink(models.resolve("link-in.gguf"), inside);
        Files.createSymbolicLink(tmp.resolve("alias"), models); // the folder itself through a link
        ModelsDirectory dir = new ModelsDirectory(tmp.resolve("alias").toString());

        assertEquals(inside.toRealPath(), dir.resolve(inside.toString()));
        assertEquals(inside.toRealPath(), dir.resolve("m.gguf"));
        assertEquals(nested.toRealPath(), dir.resolve("sub/../sub/n.gguf"));
        assertEquals(inside.toRealPath(), dir.resolve("link-in.gguf"), "a link that stays inside is fine");
        assertEquals(inside.toRealPath(), dir.resolve(tmp.resolve("alias/m.gguf").toString()));

        List<String> refused = List.of(outside.toString(), "../secret.gguf", "sub/../../secret.gguf", "link-out.gguf",
                tmp.resolve("missing.gguf").toString(), "missing.gguf", "sub", "", "/etc/passwd", "a\0b");
        String suffix = "' is not a readable model file inside this node's models directory";
        for (String path : refused) {
            ModelsDirectory.ModelPathException e = assertThrows(ModelsDirectory.ModelPathException.class, () -> dir.resolve(path), path);
            assertTrue(e.getMessage().endsWith(suffix), e.getMessage());
            assertEquals(e.getMessage().length() - suffix.length(), e.getMessage().indexOf(suffix), "one message for every refusal");
        }
    }

    @Test
    void withoutAFolder_everythingIsRefused_aMissingFolderIsAStartError(@TempDir Path tmp) throws Exception {
        ModelsDirectory none = new ModelsDirectory(null);
        Path f = Files.writeString(tmp.resolve("m.gguf"), "x");
        assertTrue(assertThrows(ModelsDirectory.ModelPathException.class, () -> none.resolve(f.toString())).getMessage()
                .contains("--models-dir"));
        assertThrows(IllegalArgumentException.class, () -> new ModelsDirectory(tmp.resolve("nope").toString()));
        assertThrows(IllegalArgumentException.class, () -> new ModelsDirectory(f.toString()));
    }
}
