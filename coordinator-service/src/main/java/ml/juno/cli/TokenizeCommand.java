package ml.juno.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code juno tokenize}: the token ids of a text, with llama-tokenize's defaults. */
@Command(name = "tokenize", mixinStandardHelpOptions = true,
        description = "Print the token ids of a text. BOS is added when the model asks for it and special-token text is parsed, as llama-tokenize does.")
final class TokenizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOption model;

    static final class Input {
        @Option(names = "--text", paramLabel = "TEXT", description = "The text to tokenize.")
        String text;

        @Option(names = "--stdin", description = "Read the text from standard input instead.")
        boolean stdin;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Input input;

    @Option(names = "--no-bos", description = "Add no BOS/EOS tokens, whatever the model says.")
    boolean noBos;

    @Option(names = "--no-parse-special", description = "Treat special-token text such as <|im_end|> as plain text.")
    boolean noParseSpecial;

    @Option(names = "--json", description = "Print {\"tokens\":[...]} instead of one 'id -> piece' line per token.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        String text = input.stdin ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8) : input.text;
        Tokenizer tokenizer;
        try (GgufFile file = GgufFile.open(model.resolve())) {
            tokenizer = Tokenizer.fromGguf(file);
        } catch (IllegalArgumentException e) {
            throw new CliException("cannot build a tokenizer from " + model.resolve() + ": " + e.getMessage());
        }
        int[] ids;
        try {
            ids = tokenizer.encode(text, !noBos, !noParseSpecial);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectMapper mapper = new ObjectMapper();
            ObjectNode node = mapper.createObjectNode();
            var arr = node.putArray("tokens");
            for (int id : ids) {
                arr.add(id);
            }
            out.println(mapper.writeValueAsString(node));
        } else {
            for (int id : ids) {
                out.println(String.format("%6d -> '%s'", id, tokenizer.piece(id)));
            }
        }
        out.flush();
        return 0;
    }
}
