package ml.juno.coordinator.tools;

import java.util.Objects;

/** OpenAI's {@code tool_choice}: {@code auto}, {@code none}, {@code required} or one named function. */
public sealed interface ToolChoice {

    /** The model decides whether to call (the default when tools are given). */
    record Auto() implements ToolChoice {
    }

    /** No calls: the prompt shows no tools and the answer is plain text. */
    record None() implements ToolChoice {
    }

    /** The model must call one or more of the tools. */
    record Required() implements ToolChoice {
    }

    /** The model must call this function. */
    record Named(String name) implements ToolChoice {
        public Named {
            Objects.requireNonNull(name, "name");
        }
    }

    ToolChoice AUTO = new Auto();
    ToolChoice NONE = new None();
    ToolChoice REQUIRED = new Required();

    /** Whether a call is forced ({@code required} or a named function). */
    default boolean forced() {
        return this instanceof Required || this instanceof Named;
    }
}
