package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.tokenizer.Tokenizer;

/**
 * The SSE frames of one streamed response, byte-exact as OpenAI sends them: {@code data: {json}\n\n} …
 * {@code data: [DONE]\n\n}. A content chunk is one {@code StringBuilder} over a prefix rendered once per
 * request (id, created, model, fingerprint), its strings escaped by Jackson's encoder; rarer chunks (role, finish,
 * usage, logprobs, error) go through Jackson and the records, which define the same shapes.
 */
public final class ChunkFormat {

    public static final String DONE = "data: [DONE]\n\n";
    private static final String CHAT_CHUNK = "chat.completion.chunk";
    private static final String TEXT_COMPLETION = "text_completion";

    private final ObjectMapper json;
    private final Tokenizer tokenizer;
    private final boolean chat;
    private final String id;
    private final long created;
    private final String model;
    private final String fingerprint;
    /** {@code data: {"id":…,"choices":[{} — everything before a choice's own fields. */
    private final String prefix;
    /** {@code stream_options.include_usage}: every chunk but the usage chunk says {@code "usage":null}, as OpenAI's do. */
    private final boolean usageNull;

    public ChunkFormat(ObjectMapper json, Tokenizer tokenizer, boolean chat, String id, long created, String model, String fingerprint) {
        this(json, tokenizer, chat, id, created, model, fingerprint, false);
    }

    /** As above; {@code includeUsage}: the stream ends with a usage chunk, and every other chunk has {@code "usage":null}. */
    public ChunkFormat(ObjectMapper json, Tokenizer tokenizer, boolean chat, String id, long created, String model, String fingerprint,
                       boolean includeUsage) {
        this.usageNull = includeUsage;
        this.json = json;
        this.tokenizer = tokenizer;
        this.chat = chat;
        this.id = id;
        this.created = created;
        this.model = model;
        this.fingerprint = fingerprint;
        StringBuilder sb = new StringBuilder("data: {\"id\":");
        quote(sb, id).append(",\"object\":");
        quote(sb, chat ? CHAT_CHUNK : TEXT_COMPLETION).append(",\"created\":").append(created).append(",\"model\":");
        quote(sb, model).append(",\"system_fingerprint\":");
        quote(sb, fingerprint).append(",\"choices\":[{");
        this.prefix = sb.toString();
    }

    Tokenizer tokenizer() {
        return tokenizer;
    }

    /** A chunk carrying {@code text} for choice {@code index}; the hot path, one builder per token. */
    public String content(int index, String text) {
        StringBuilder sb = new StringBuilder(prefix.length() + text.length() + 96).append(prefix);
        if (chat) {
            sb.append("\"index\":").append(index).append(",\"delta\":{\"content\":");
            quote(sb, text).append('}');
        } else {
            sb.append("\"text\":");
            quote(sb, text).append(",\"index\":").append(index);
        }
        sb.append(",\"logprobs\":null,\"finish_reason\":null}]");
        if (usageNull) {
            sb.append(",\"usage\":null");
        }
        return sb.append("}\n\n").toString();
    }

    /** A JSON string literal, escaped by Jackson as every other chunk is. */
    private static StringBuilder quote(StringBuilder sb, String s) {
        sb.append('"');
        JsonStringEncoder.getInstance().quoteAsString(s, sb);
        return sb.append('"');
    }

    /** A content chunk with the token's log-probabilities ({@code textOffset}: legacy completions only). */
    public String content(int index, String text, TokenLogprobs logprobs, int textOffset) {
        if (chat) {
            ChatLogprobs lp = new ChatLogprobs(List.of(LogprobsMapping.entry(logprobs, tokenizer)));
            return chatChunk(new ChatCompletionChunk.Choice(index, new ChatCompletionChunk.Delta(null, text), lp, null));
        }
        TextCompletion.Logprobs lp = LogprobsMapping.text(List.of(logprobs), tokenizer, textOffset);
        return textChunk(new TextCompletion.Choice(text, index, lp, null));
    }

    /** Legacy completions' {@code echo}: the prompt's text first, with its tokens' log-probabilities or null. */
    public String echo(int index, String text, TextCompletion.Logprobs logprobs) {
        return textChunk(new TextCompletion.Choice(text, index, logprobs, null));
    }

    /** The first chunk of a chat choice: the assistant role, empty content. */
    public String role(int index) {
        return chatChunk(new ChatCompletionChunk.Choice(index, new ChatCompletionChunk.Delta("assistant", ""), null, null));
    }

    /** The last chunk of a choice: empty delta, the finish reason. */
    public String finish(int index, FinishReason reason) {
        return finish(index, reason.wireName());
    }

    /** The last chunk of a choice, with a wire finish reason ({@code tool_calls} has no {@link FinishReason}). */
    public String finish(int index, String wireReason) {
        if (chat) {
            return chatChunk(new ChatCompletionChunk.Choice(index, new ChatCompletionChunk.Delta(null, null), null, wireReason));
        }
        return textChunk(new TextCompletion.Choice("", index, null, wireReason));
    }

    /**
     * One piece of tool call {@code callIndex} of choice {@code index}: with {@code id} (and {@code name}, empty
     * {@code arguments}) for its first piece, else an arguments fragment alone.
     */
    public String toolCall(int index, int callIndex, String id, String name, String arguments) {
        ChatCompletionChunk.ToolCallDelta call = new ChatCompletionChunk.ToolCallDelta(callIndex, id, id != null ? "function" : null,
                new ChatCompletionChunk.FunctionDelta(name, arguments));
        return chatChunk(new ChatCompletionChunk.Choice(index, new ChatCompletionChunk.Delta(null, null, List.of(call)), null, null));
    }

    /** {@code stream_options.include_usage}: empty {@code choices} and the request's usage. */
    public String usage(Usage usage) {
        Object chunk = chat
                ? new ChatCompletionChunk(id, CHAT_CHUNK, created, model, fingerprint, List.of(), UsageDto.of(usage))
                : new TextCompletion(id, TEXT_COMPLETION, created, model, fingerprint, List.of(), UsageDto.of(usage));
        return frame(chunk, false);
    }

    /** An error after streaming started; {@link #DONE} follows it. */
    public String error(ErrorResponse error) {
        return frame(error, false);
    }

    private String chatChunk(ChatCompletionChunk.Choice choice) {
        return frame(new ChatCompletionChunk(id, CHAT_CHUNK, created, model, fingerprint, List.of(choice), null), usageNull);
    }

    private String textChunk(TextCompletion.Choice choice) {
        return frame(new TextCompletion(id, TEXT_COMPLETION, created, model, fingerprint, List.of(choice), null), usageNull);
    }

    /** {@code usageNull}: the object gets {@code "usage":null} last (the records leave a null usage out). */
    private String frame(Object value, boolean usageNull) {
        try {
            String body = json.writeValueAsString(value);
            if (usageNull) {
                body = body.substring(0, body.length() - 1) + ",\"usage\":null}";
            }
            return "data: " + body + "\n\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a response chunk", e);
        }
    }
}
