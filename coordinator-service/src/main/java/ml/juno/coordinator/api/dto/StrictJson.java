package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import io.quarkus.jackson.ObjectMapperCustomizer;
import jakarta.inject.Singleton;

/**
 * Wrong JSON types are client mistakes, not something to guess around: {@code "temperature": "hot"},
 * {@code "max_tokens": 1.5}, {@code "model": 5} or {@code "stream": "yes"} fail with a 400 naming the field,
 * as OpenAI does, instead of being coerced. Parameters Juno does not implement are refused ({@link UnsupportedParameters}).
 */
@Singleton
public class StrictJson implements ObjectMapperCustomizer {

    @Override
    @SuppressWarnings("deprecation") // ALLOW_COERCION_OF_SCALARS is the switch for string → number and back
    public void customize(ObjectMapper mapper) {
        mapper.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
        mapper.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        mapper.configure(MapperFeature.ALLOW_COERCION_OF_SCALARS, false);
        mapper.addHandler(new UnsupportedParameters()); // unknown and unimplemented parameters are refused, not ignored
        for (LogicalType t : new LogicalType[] {LogicalType.Textual, LogicalType.Integer, LogicalType.Float, LogicalType.Boolean}) {
            mapper.coercionConfigFor(t)
                    .setCoercion(CoercionInputShape.Integer, t == LogicalType.Integer || t == LogicalType.Float ? CoercionAction.TryConvert : CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, t == LogicalType.Float ? CoercionAction.TryConvert : CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Boolean, t == LogicalType.Boolean ? CoercionAction.TryConvert : CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.String, t == LogicalType.Textual ? CoercionAction.TryConvert : CoercionAction.Fail);
        }
    }
}
