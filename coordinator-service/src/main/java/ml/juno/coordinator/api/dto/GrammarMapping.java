package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.databind.JsonNode;
import ml.juno.coordinator.grammar.Grammar;
import ml.juno.coordinator.grammar.GrammarException;
import ml.juno.coordinator.service.InvalidRequestException;

/**
 * {@code response_format} and {@code grammar} (llama.cpp's GBNF field) to the {@link Grammar} that constrains
 * decoding; null for plain text. Invalid grammars and schemas, unsupported schema features and the two fields at
 * once are 400s naming the field.
 */
public final class GrammarMapping {
    /** Longest GBNF text or JSON schema accepted (characters). */
    public static final int MAX_GRAMMAR_CHARS = 256 * 1024;

    private GrammarMapping() {
    }

    /** The grammar of a chat request's fields; null when the text is unconstrained. */
    public static Grammar of(ResponseFormat format, String gbnf) {
        if (format != null && gbnf != null) {
            throw new InvalidRequestException("grammar", "grammar and response_format cannot be used together");
        }
        if (gbnf != null) {
            return gbnf(gbnf);
        }
        if (format == null) {
            return null;
        }
        return switch (format.type()) {
            case "text" -> {
                if (format.jsonSchema() != null) {
                    throw new InvalidRequestException("response_format", "json_schema is only allowed with type json_schema");
                }
                yield null;
            }
            case "json_object" -> {
                if (format.jsonSchema() != null) {
                    throw new InvalidRequestException("response_format", "json_schema is only allowed with type json_schema");
                }
                yield Grammar.anyJsonObject();
            }
            case "json_schema" -> schema(format.jsonSchema());
            default -> throw new InvalidRequestException("response_format", "Invalid value '" + format.type()
                    + "' for response_format.type: expected one of 'text', 'json_object' or 'json_schema'");
        };
    }

    /** A GBNF {@code grammar} field; null when absent. */
    public static Grammar gbnf(String gbnf) {
        if (gbnf == null) {
            return null;
        }
        if (gbnf.length() > MAX_GRAMMAR_CHARS) {
            throw new InvalidRequestException("grammar", "grammar is longer than " + MAX_GRAMMAR_CHARS + " characters");
        }
        try {
            return Grammar.parseGbnf(gbnf);
        } catch (GrammarException e) {
            throw new InvalidRequestException("grammar", "Invalid grammar: " + e.getMessage());
        }
    }

    private static Grammar schema(ResponseFormat.JsonSchemaFormat f) {
        if (f == null) {
            throw new InvalidRequestException("response_format", "response_format of type json_schema needs a json_schema object");
        }
        if (f.name() == null || !f.name().matches("[a-zA-Z0-9_-]{1,64}")) {
            throw new InvalidRequestException("response_format", "response_format.json_schema.name is required and must be"
                    + " 1 to 64 letters, digits, '_' or '-'");
        }
        JsonNode schema = f.schema();
        if (schema == null || schema.isNull()) {
            throw new InvalidRequestException("response_format", "response_format.json_schema.schema is required");
        }
        String text = schema.toString();
        if (text.length() > MAX_GRAMMAR_CHARS) {
            throw new InvalidRequestException("response_format", "the schema is longer than " + MAX_GRAMMAR_CHARS + " characters");
        }
        try {
            return Grammar.fromJsonSchema(schema);
        } catch (GrammarException e) {
            throw new InvalidRequestException("response_format", "Invalid schema for response_format '" + f.name() + "': "
                    + e.getMessage());
        }
    }
}
