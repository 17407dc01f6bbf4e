package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.deser.DeserializationProblemHandler;
import java.io.IOException;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The one list of OpenAI request parameters that Juno knows but does not implement, for chat and text completions, and
 * what happens to fields it does not know at all. A parameter Juno implements is a component of the request record and
 * never gets here; everything else does (Jackson's unknown-property hook) and is refused with a 400 naming it, never
 * ignored:
 * <ul>
 *   <li>a known parameter Juno does not implement: "{@code 'suffix' is not supported by Juno: …}" (code
 *       {@code unsupported_parameter}), unless its value is {@code null} or the value that asks for nothing
 *       ({@code "store": false}, {@code "modalities": ["text"]}, {@code "suffix": ""}, …);</li>
 *   <li>a parameter nobody defines: OpenAI's own answer, "{@code Unrecognized request argument supplied: foo}" (code
 *       {@code unknown_parameter}); a {@code null} value counts as absent.</li>
 * </ul>
 * Hints that change nothing in the answer ({@code user}, {@code prompt_cache_key}, {@code safety_identifier}) are
 * accepted. Only the top-level chat and completions bodies are policed this way; nested objects and the other
 * endpoints keep Jackson's default.
 */
public final class UnsupportedParameters extends DeserializationProblemHandler {

    /** A parameter Juno refuses, and the values that ask for nothing and therefore pass. */
    record Refusal(String why, Predicate<JsonNode> harmless) {
    }

    private static final Predicate<JsonNode> NEVER = v -> false;
    private static final Predicate<JsonNode> ALWAYS = v -> true;

    private static Predicate<JsonNode> equalsText(String... values) {
        return v -> v.isTextual() && java.util.Arrays.asList(values).contains(v.asText());
    }

    /** Shared by chat and completions. */
    private static final Map<String, Refusal> COMMON = Map.of(
            "service_tier", new Refusal("Juno has one service tier; send \"auto\" or \"default\" or leave it out",
                    equalsText("auto", "default")),
            "store", new Refusal("Juno stores no completions; send false or leave it out", JsonNode::isBoolean),
            "metadata", new Refusal("metadata goes with stored completions, which Juno does not keep",
                    v -> v.isObject() && v.isEmpty()),
            "prompt_cache_key", new Refusal("", ALWAYS),   // a routing hint; Juno's prefix cache needs none
            "safety_identifier", new Refusal("", ALWAYS)); // like user: an identifier, nothing to do

    private static final Map<String, Refusal> CHAT = Map.of(
            "audio", new Refusal("audio output is not supported", NEVER),
            "modalities", new Refusal("only text output is supported; send [\"text\"] or leave it out",
                    v -> v.isArray() && v.size() == 1 && "text".equals(v.get(0).asText())),
            "prediction", new Refusal("predicted outputs are not supported", NEVER),
            "functions", new Refusal("the deprecated functions API is not supported", NEVER),
            "function_call", new Refusal("the deprecated functions API is not supported", NEVER),
            "reasoning_effort", new Refusal("Juno has no reasoning-effort setting", NEVER),
            "verbosity", new Refusal("Juno has no verbosity setting", NEVER),
            "web_search_options", new Refusal("web search is not supported", NEVER));

    private static final Map<String, Refusal> COMPLETIONS = Map.of(
            "suffix", new Refusal("insertion (text after the completion) is not supported; leave it out or send \"\"",
                    v -> v.isTextual() && v.asText().isEmpty()));

    private static final Map<Class<?>, Map<String, Refusal>> BY_BODY = Map.of(
            ChatCompletionRequest.class, CHAT,
            CompletionRequest.class, COMPLETIONS);

    /** The parameters of {@code body} that are known to OpenAI but refused by Juno (for the docs and tests). */
    public static java.util.Set<String> refused(Class<?> body) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (var m : java.util.List.of(COMMON, BY_BODY.getOrDefault(body, Map.of()))) {
            m.forEach((name, r) -> {
                if (r.harmless() != ALWAYS) {
                    names.add(name);
                }
            });
        }
        return names;
    }

    @Override
    public boolean handleUnknownProperty(DeserializationContext ctxt, JsonParser p, JsonDeserializer<?> deserializer,
                                         Object beanOrClass, String name) throws IOException {
        Class<?> body = beanOrClass instanceof Class<?> c ? c : beanOrClass.getClass();
        Map<String, Refusal> known = BY_BODY.get(body);
        if (known == null) {
            return false; // not a body this policy covers: Jackson's default
        }
        JsonNode value = ctxt.readTree(p); // consumes the value
        if (value == null || value.isNull() || value.isMissingNode()) {
            return true; // null is as good as absent
        }
        Refusal r = known.containsKey(name) ? known.get(name) : COMMON.get(name);
        if (r == null) {
            throw new Refused(p, name, "Unrecognized request argument supplied: " + name, "unknown_parameter");
        }
        if (r.harmless().test(value)) {
            return true;
        }
        throw new Refused(p, name, "'" + name + "' is not supported by Juno: " + r.why(), "unsupported_parameter");
    }

    /** A refused parameter: a 400 with {@code param} set to its name. */
    public static final class Refused extends JsonMappingException {
        private final String param;
        private final String code;

        Refused(JsonParser p, String param, String message, String code) {
            super(p, message);
            this.param = param;
            this.code = code;
        }

        public String param() {
            return param;
        }

        public String code() {
            return code;
        }
    }
}
