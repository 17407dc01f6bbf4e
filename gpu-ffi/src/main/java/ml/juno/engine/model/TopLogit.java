package ml.juno.engine.model;

/** One entry of a top-K list: a token id and its raw logit. */
public record TopLogit(int token, float logit) {}
