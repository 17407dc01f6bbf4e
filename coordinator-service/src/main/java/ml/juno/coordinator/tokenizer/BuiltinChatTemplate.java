package ml.juno.coordinator.tokenizer;

import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.jfr.TemplateFormatEvent;

/**
 * Chat formats for models whose file carries no {@code tokenizer.chat_template}, written from the
 * published formats of each family. {@link ChatTemplates#forModel} picks one from metadata. A system
 * message is folded into the first user turn by the formats that have no system role.
 */
public enum BuiltinChatTemplate {
    CHATML("chatml", List.of("<|im_end|>")),
    LLAMA2("llama2", List.of("[INST]")),
    LLAMA3("llama3", List.of("<|eot_id|>")),
    MISTRAL("mistral", List.of("[INST]")),
    ZEPHYR("zephyr", List.of("<|user|>")),
    GEMMA("gemma", List.of("<end_of_turn>")),
    PHI3("phi3", List.of("<|end|>"));

    private final String id;
    private final List<String> stops;

    BuiltinChatTemplate(String id, List<String> stops) {
        this.id = id;
        this.stops = stops;
    }

    public String id() {
        return id;
    }

    /** This format bound to a vocabulary's BOS/EOS text. */
    public ChatTemplate bind(String bosToken, String eosToken) {
        String bos = bosToken == null ? "" : bosToken;
        String eos = eosToken == null ? "" : eosToken;
        BuiltinChatTemplate self = this;
        return new ChatTemplate() {
            @Override
            public String name() {
                return id;
            }

            @Override
            public String render(ChatRequest request) {
                TemplateFormatEvent event = TemplateFormatEvent.startIfEnabled(); // null unless JFR records it
                return TemplateFormatEvent.finish(event, id, request.messages().size(), self.render(request, bos, eos));
            }

            @Override
            public List<String> stopStrings() {
                return stops;
            }
        };
    }

    String render(ChatRequest r, String bos, String eos) {
        List<ChatMessage> msgs = r.messages();
        StringBuilder sb = new StringBuilder();
        switch (this) {
            case CHATML -> {
                for (ChatMessage m : msgs) {
                    sb.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append("<|im_end|>\n");
                }
                if (r.addGenerationPrompt()) {
                    sb.append("<|im_start|>assistant\n");
                }
            }
            case LLAMA3 -> {
                sb.append(bos);
                for (ChatMessage m : msgs) {
                    sb.append("<|start_header_id|>").append(m.role()).append("<|end_header_id|>\n\n")
                            .append(m.content().strip()).append("<|eot_id|>");
                }
                if (r.addGenerationPrompt()) {
                    sb.append("<|start_header_id|>assistant<|end_header_id|>\n\n");
                }
            }
            case LLAMA2 -> {
                String system = null;
                boolean first = true;
                for (ChatMessage m : msgs) {
                    switch (m.role()) {
                        case "system" -> system = m.content();
                        case "user" -> {
                            String content = m.content().strip();
                            if (first && system != null) {
                                content = "<<SYS>>\n" + system.strip() + "\n<</SYS>>\n\n" + content;
                            }
                            sb.append(bos).append("[INST] ").append(content).append(" [/INST]");
                            first = false;
                        }
                        case "assistant" -> sb.append(' ').append(m.content().strip()).append(' ').append(eos);
                        default -> throw unsupportedRole(m);
                    }
                }
            }
            case MISTRAL -> {
                sb.append(bos);
                for (ChatMessage m : foldSystem(msgs)) {
                    switch (m.role()) {
                        case "user" -> sb.append("[INST] ").append(m.content()).append(" [/INST]");
                        case "assistant" -> sb.append(m.content()).append(eos);
                        default -> throw unsupportedRole(m);
                    }
                }
            }
            case ZEPHYR -> {
                for (ChatMessage m : msgs) {
                    sb.append("<|").append(m.role()).append("|>\n").append(m.content()).append(eos).append('\n');
                }
                if (r.addGenerationPrompt()) {
                    sb.append("<|assistant|>\n");
                }
            }
            case GEMMA -> {
                sb.append(bos);
                for (ChatMessage m : foldSystem(msgs)) {
                    String role = m.role().equals("assistant") ? "model" : m.role();
                    if (!role.equals("user") && !role.equals("model")) {
                        throw unsupportedRole(m);
                    }
                    sb.append("<start_of_turn>").append(role).append('\n').append(m.content().strip())
                            .append("<end_of_turn>\n");
                }
                if (r.addGenerationPrompt()) {
                    sb.append("<start_of_turn>model\n");
                }
            }
            case PHI3 -> {
                for (ChatMessage m : msgs) {
                    sb.append("<|").append(m.role()).append("|>\n").append(m.content()).append("<|end|>\n");
                }
                if (r.addGenerationPrompt()) {
                    sb.append("<|assistant|>\n");
                }
            }
        }
        return sb.toString();
    }

    /** Prepends a leading system message to the first user message (formats without a system role). */
    private static List<ChatMessage> foldSystem(List<ChatMessage> msgs) {
        if (msgs.isEmpty() || !msgs.get(0).role().equals("system")) {
            return msgs;
        }
        List<ChatMessage> out = new ArrayList<>(msgs.subList(1, msgs.size()));
        String system = msgs.get(0).content();
        if (!out.isEmpty() && out.get(0).role().equals("user")) {
            out.set(0, ChatMessage.user(system + "\n\n" + out.get(0).content()));
        } else {
            out.add(0, ChatMessage.user(system));
        }
        return out;
    }

    private ChatTemplateException unsupportedRole(ChatMessage m) {
        return new ChatTemplateException("the " + id + " chat format has no role '" + m.role() + "'");
    }
}
