package ml.juno.coordinator.service;

import java.util.List;
import ml.juno.coordinator.tokenizer.ChatMessage;

/** What a request asks the model to continue: a chat, a text, or token ids. */
public sealed interface PromptInput {

    /** A conversation, rendered with the model's chat template. */
    record Chat(List<ChatMessage> messages) implements PromptInput {
        public Chat {
            messages = List.copyOf(messages);
        }
    }

    /** Plain text, tokenized with the model's BOS rule. */
    record Text(String text) implements PromptInput {
    }

    /** Token ids as given. */
    record Tokens(int[] ids) implements PromptInput {
        public Tokens {
            ids = ids.clone();
        }
    }
}
