package ml.juno.coordinator.tokenizer;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import ml.juno.coordinator.jfr.TemplateFormatEvent;
import jinjava.javax.el.CompositeELResolver;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;

/**
 * Renders a model's {@code tokenizer.chat_template} with Jinjava, set up like Hugging Face's
 * {@code apply_chat_template}: {@code trim_blocks} and {@code lstrip_blocks} on; variables
 * {@code messages}, {@code add_generation_prompt}, {@code bos_token}, {@code eos_token} and
 * {@code tools} (when given); functions {@code raise_exception} and {@code strftime_now}; Python
 * string methods ({@link PythonStringMethods}) and Python's {@code json.dumps} layout for {@code tojson}
 * ({@link PythonJsonFilter}). Output size is capped, since templates come from model
 * files.
 */
public final class JinjaChatTemplate implements ChatTemplate {
    private static final long MAX_OUTPUT = 32L << 20;
    private static final Jinjava JINJAVA = create();

    /**
     * {@code {% for x in xs if cond %}} (Jinja loop filter), which Jinjava would silently ignore. Groups:
     * 1 tag opening, 2 loop variable, 3 iterable, 4 condition, 5 tag closing.
     */
    private static final Pattern LOOP_FILTER = Pattern.compile(
            "(\\{%-?\\s*for\\s+)([A-Za-z_][A-Za-z0-9_]*)\\s+in\\s+([^%]*?)\\s+if\\s+([^%]*?)(\\s*-?%\\})");
    private static final Pattern ANY_LOOP_FILTER = Pattern.compile("\\{%-?\\s*for\\s[^%]*?\\sin\\s[^%]*?\\sif\\s[^%]*?%\\}");

    private final String source;
    private final String rewritten;
    private final boolean unsupportedLoopFilter;
    private final String bosToken;
    private final String eosToken;
    private final List<String> stops;

    /**
     * @param source   the Jinja source
     * @param bosToken text of the BOS token ("" if none)
     * @param eosToken text of the EOS token ("" if none)
     * @param stops    stop strings for this template
     */
    public JinjaChatTemplate(String source, String bosToken, String eosToken, List<String> stops) {
        this.source = Objects.requireNonNull(source, "source");
        this.rewritten = rewriteLoopFilters(lstripBlocks(source));
        this.unsupportedLoopFilter = ANY_LOOP_FILTER.matcher(rewritten).find();
        this.bosToken = bosToken == null ? "" : bosToken;
        this.eosToken = eosToken == null ? "" : eosToken;
        this.stops = List.copyOf(stops);
    }

    private static Jinjava create() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonStringMethods());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_WRITE);
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(false) // emulated in lstripBlocks(): Jinjava also strips mid-line
                .withElResolver(resolver)
                .withMaxOutputSize(MAX_OUTPUT)
                .withFailOnUnknownTokens(false)
                .build();
        Jinjava j = new Jinjava(config);
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "raise_exception",
                JinjaChatTemplate.class, "raiseException", String.class));
        j.getGlobalContext().registerFilter(new PythonJsonFilter());
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "juno_select",
                JinjaChatTemplate.class, "select", Object.class, String.class, String.class));
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "strftime_now",
                JinjaChatTemplate.class, "strftimeNow", String.class));
        return j;
    }

    /**
     * Jinja's {@code lstrip_blocks}: spaces and tabs between the start of a line and a block or comment
     * tag are removed ({@code {%+ } keeps them). Jinjava's own option also strips before tags in the
     * middle of a line, which changes output, so it is done here instead.
     */
    static String lstripBlocks(String src) {
        StringBuilder sb = new StringBuilder(src.length());
        int lineStart = 0; // index in sb where the current output line starts
        for (int i = 0; i < src.length(); i++) {
            char c = src.charAt(i);
            if (c == '{' && i + 1 < src.length() && (src.charAt(i + 1) == '%' || src.charAt(i + 1) == '#')) {
                boolean keep = i + 2 < src.length() && src.charAt(i + 2) == '+';
                int k = sb.length();
                while (k > lineStart && (sb.charAt(k - 1) == ' ' || sb.charAt(k - 1) == '\t')) {
                    k--;
                }
                if (k == lineStart && !keep) {
                    sb.setLength(k);
                }
                sb.append(c).append(src.charAt(i + 1));
                i += keep ? 2 : 1; // drop the '+' of "{%+"
                continue;
            }
            sb.append(c);
            if (c == '\n') {
                lineStart = sb.length();
            }
        }
        return sb.toString();
    }

    /**
     * Rewrites {@code {% for x in xs if cond %}} to {@code {% for x in juno_select(xs, 'x', 'cond') %}}, so
     * that the loop runs over the matching items only and {@code loop.index}/{@code loop.last} count them,
     * as in Jinja.
     */
    static String rewriteLoopFilters(String src) {
        java.util.regex.Matcher m = LOOP_FILTER.matcher(src);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String replacement = m.group(1) + m.group(2) + " in juno_select(" + m.group(3) + ", '" + m.group(2) + "', '"
                    + m.group(4).replace("\\", "\\\\").replace("'", "\\'") + "')" + m.group(5);
            m.appendReplacement(sb, java.util.regex.Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** Template function behind rewritten loop filters: the items for which {@code condition} holds. */
    public static List<Object> select(Object items, String variable, String condition) {
        com.hubspot.jinjava.interpret.JinjavaInterpreter interpreter =
                com.hubspot.jinjava.interpret.JinjavaInterpreter.getCurrent();
        List<Object> out = new ArrayList<>();
        Iterable<?> it = items instanceof Iterable<?> i ? i
                : items instanceof Map<?, ?> map ? map.keySet() : items == null ? List.of() : List.of(items);
        for (Object item : it) {
            try (var scope = interpreter.enterScope()) {
                interpreter.getContext().put(variable, item);
                Object r = interpreter.resolveELExpression(condition, -1);
                if (com.hubspot.jinjava.util.ObjectTruthValue.evaluate(r)) {
                    out.add(item);
                }
            }
        }
        return out;
    }

    /** Template function {@code raise_exception(message)}. */
    public static String raiseException(String message) {
        throw new TemplateRaisedException(message);
    }

    /** Template function {@code strftime_now(format)} for the common {@code %d %b %Y}-style formats. */
    public static String strftimeNow(String format) {
        LocalDate d = LocalDate.now();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                sb.append(c);
                continue;
            }
            char f = format.charAt(++i);
            sb.append(switch (f) {
                case 'd' -> String.format("%02d", d.getDayOfMonth());
                case 'm' -> String.format("%02d", d.getMonthValue());
                case 'Y' -> String.valueOf(d.getYear());
                case 'y' -> String.format("%02d", d.getYear() % 100);
                case 'b' -> d.format(DateTimeFormatter.ofPattern("MMM", Locale.ENGLISH));
                case 'B' -> d.format(DateTimeFormatter.ofPattern("MMMM", Locale.ENGLISH));
                case 'A' -> d.format(DateTimeFormatter.ofPattern("EEEE", Locale.ENGLISH));
                case 'a' -> d.format(DateTimeFormatter.ofPattern("EEE", Locale.ENGLISH));
                case '%' -> "%";
                default -> "%" + f;
            });
        }
        return sb.toString();
    }

    /** Thrown by {@code raise_exception}; carries the template's own message. */
    static final class TemplateRaisedException extends RuntimeException {
        TemplateRaisedException(String message) {
            super(message);
        }
    }

    @Override
    public String name() {
        return "jinja";
    }

    @Override
    public List<String> stopStrings() {
        return stops;
    }

    public String source() {
        return source;
    }

    @Override
    public String render(ChatRequest request) {
        if (unsupportedLoopFilter) {
            throw new ChatTemplateException("chat template uses a loop filter over several variables "
                    + "({% for a, b in xs if cond %}), which the Jinja engine here does not support");
        }
        TemplateFormatEvent event = TemplateFormatEvent.startIfEnabled(); // null unless a JFR recording wants it
        List<Map<String, Object>> messages = new ArrayList<>();
        for (ChatMessage m : request.messages()) {
            Map<String, Object> msg = new LinkedHashMap<>();
            msg.put("role", m.role());
            msg.put("content", m.content());
            msg.putAll(m.fields());
            messages.add(msg);
        }
        Map<String, Object> ctx = new HashMap<>();
        ctx.put("messages", messages);
        ctx.put("add_generation_prompt", request.addGenerationPrompt());
        ctx.put("bos_token", bosToken);
        ctx.put("eos_token", eosToken);
        if (!request.tools().isEmpty()) {
            ctx.put("tools", request.tools());
        }
        RenderResult result;
        try {
            result = JINJAVA.renderForResult(rewritten, ctx);
        } catch (TemplateRaisedException e) {
            throw new ChatTemplateException("chat template refused the conversation: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new ChatTemplateException("chat template failed: " + e.getMessage(), e);
        }
        for (TemplateError err : result.getErrors()) {
            if (err.getSeverity() == TemplateError.ErrorType.FATAL) {
                Throwable cause = err.getException();
                while (cause != null && !(cause instanceof TemplateRaisedException)) {
                    cause = cause.getCause();
                }
                if (cause != null) {
                    throw new ChatTemplateException("chat template refused the conversation: " + cause.getMessage(), cause);
                }
                String msg = err.getMessage();
                if (msg != null && msg.contains("raise_exception")) {
                    throw new ChatTemplateException("chat template refused the conversation: " + msg);
                }
                throw new ChatTemplateException("chat template error at line " + err.getLineno() + ": " + msg);
            }
        }
        return TemplateFormatEvent.finish(event, name(), request.messages().size(), result.getOutput());
    }
}
