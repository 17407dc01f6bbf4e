package ml.juno.coordinator.tools;

import java.util.List;
import ml.juno.coordinator.grammar.Grammar;
import ml.juno.coordinator.grammar.JsonSchemaGrammar;

/**
 * The grammar of a forced call ({@code tool_choice} {@code required} or a named function): the model's call syntax
 * around {@code {"name": "<one of the functions>", "arguments": <that function's parameters schema>}}, so that
 * constrained decoding can only write calls that parse and whose arguments validate. Written as GBNF text from
 * {@link JsonSchemaGrammar}'s per-function rules (each prefixed with its own start rule's name) and compiled once
 * per request.
 * <ul>
 *   <li>{@link ToolSyntax#HERMES}: {@code <tool_call>\n{…}\n</tool_call>}, several separated by a new line when
 *       parallel calls are allowed.</li>
 *   <li>{@link ToolSyntax#LLAMA3_JSON}: {@code {"name": …, "parameters": {…}}}, several separated by {@code "; "}.</li>
 *   <li>{@link ToolSyntax#MISTRAL}: {@code [{…}, {…}]} (the {@code [TOOL_CALLS]} control token is not text a grammar can
 *       write; the parser reads an answer that starts with the array as calls).</li>
 * </ul>
 */
public final class ToolGrammar {

    /** One function a forced call may name: its name and its parameters' JSON schema (text). */
    public record Function(String name, String parametersSchema) {
    }

    private ToolGrammar() {
    }

    /** The GBNF text, start rule {@code root}. */
    public static String gbnf(ToolSyntax syntax, List<Function> functions, boolean parallel) {
        if (functions.isEmpty()) {
            throw new IllegalArgumentException("a forced call needs at least one function");
        }
        String argumentsKey = syntax == ToolSyntax.LLAMA3_JSON ? "parameters" : "arguments";
        StringBuilder sb = new StringBuilder();
        switch (syntax) {
            case HERMES -> sb.append(parallel ? "root ::= tc-block (\"\\n\" tc-block)*\n" : "root ::= tc-block\n")
                    .append("tc-block ::= \"<tool_call>\\n\" tc-call \"\\n</tool_call>\"\n");
            case LLAMA3_JSON -> sb.append(parallel ? "root ::= tc-call (\"; \" tc-call)*\n" : "root ::= tc-call\n");
            case MISTRAL -> sb.append(parallel ? "root ::= \"[\" tc-call (\", \" tc-call)* \"]\"\n" : "root ::= \"[\" tc-call \"]\"\n");
        }
        sb.append("tc-call ::= ");
        for (int i = 0; i < functions.size(); i++) {
            sb.append(i == 0 ? "" : " | ").append("tc-f").append(i);
        }
        sb.append('\n');
        for (int i = 0; i < functions.size(); i++) {
            Function f = functions.get(i);
            if (!f.name().matches("[A-Za-z0-9_-]{1,64}")) {
                throw new IllegalArgumentException("function name " + f.name() + " cannot be written into a grammar literal");
            }
            sb.append("tc-f").append(i).append(" ::= \"{\\\"name\\\": \\\"").append(f.name()).append("\\\", \\\"")
                    .append(argumentsKey).append("\\\": \" tc-f").append(i).append("-args \"}\"\n");
            sb.append(JsonSchemaGrammar.toGbnf(f.parametersSchema(), "tc-f" + i + "-args"));
        }
        return sb.toString();
    }

    /**
     * The compiled grammar.
     *
     * @throws ml.juno.coordinator.grammar.GrammarException a parameters schema uses something the schema compiler refuses (named)
     */
    public static Grammar compile(ToolSyntax syntax, List<Function> functions, boolean parallel) {
        return Grammar.parseGbnf(gbnf(syntax, functions, parallel), "root");
    }
}
