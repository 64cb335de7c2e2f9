package io.verbatim.pulsar.standalone;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.pulsar.broker.ServiceConfiguration;

/**
 * Sets a {@link ServiceConfiguration} property from text through its setter ({@code brokerDeduplicationEntriesInterval=1}
 * calls {@code setBrokerDeduplicationEntriesInterval(1)}), for the values a command line can carry: text, numbers,
 * booleans, enums, {@code Optional} of those, and comma-separated sets and lists of text; and the few plugin
 * properties of {@link #PLUGIN_PROPERTIES} as they are.
 */
final class ConfSetter {
    private ConfSetter() {
    }

    /**
     * Properties that are no field of ServiceConfiguration but are read by a plugin from its properties ({@code
     * conf.getProperty(key)}): the token authentication provider's key and claims.
     */
    static final Set<String> PLUGIN_PROPERTIES = Set.of("tokenSecretKey", "tokenPublicKey", "tokenPublicAlg",
            "tokenAuthClaim", "tokenAudience", "tokenAudienceClaim", "tokenSettingPrefix");

    /** Throws {@link IllegalArgumentException} naming the key for an unknown property or a value it cannot take. */
    static void set(ServiceConfiguration conf, String key, String value) {
        if (PLUGIN_PROPERTIES.contains(key)) {
            conf.getProperties().setProperty(key, value);
            return;
        }
        Method setter = setterOf(key);
        Object converted = convert(key, value, setter.getGenericParameterTypes()[0]);
        try {
            setter.invoke(conf, converted);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalArgumentException("--conf " + key + "=" + value + ": the setter failed: " + e, e);
        }
    }

    private static Method setterOf(String key) {
        if (key.isEmpty()) {
            throw new IllegalArgumentException("--conf: empty property name");
        }
        String name = "set" + Character.toUpperCase(key.charAt(0)) + key.substring(1);
        List<Method> found = new ArrayList<>();
        for (Method m : ServiceConfiguration.class.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 1) {
                found.add(m);
            }
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException("--conf " + key + ": no such ServiceConfiguration property");
        }
        if (found.size() > 1) {
            throw new IllegalArgumentException("--conf " + key + ": ambiguous, " + found.size() + " setters");
        }
        return found.get(0);
    }

    private static Object convert(String key, String value, Type type) {
        if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> raw) {
            Type arg = p.getActualTypeArguments()[0];
            if (raw == Optional.class) {
                return value.isEmpty() ? Optional.empty() : Optional.of(convert(key, value, arg));
            }
            if ((raw == Set.class || raw == List.class) && arg == String.class) {
                List<String> items = value.isEmpty() ? List.of()
                        : Arrays.stream(value.split(",")).map(String::trim).toList();
                return raw == Set.class ? new LinkedHashSet<>(items) : new ArrayList<>(items);
            }
        }
        if (type instanceof Class<?> c) {
            return convertScalar(key, value, c);
        }
        throw new IllegalArgumentException("--conf " + key + ": its type " + type.getTypeName()
                + " cannot be set from the command line");
    }

    private static Object convertScalar(String key, String value, Class<?> c) {
        try {
            if (c == String.class) {
                return value;
            } else if (c == int.class || c == Integer.class) {
                return Integer.parseInt(value);
            } else if (c == long.class || c == Long.class) {
                return Long.parseLong(value);
            } else if (c == double.class || c == Double.class) {
                return Double.parseDouble(value);
            } else if (c == float.class || c == Float.class) {
                return Float.parseFloat(value);
            } else if (c == boolean.class || c == Boolean.class) {
                if (!value.equals("true") && !value.equals("false")) {
                    throw new IllegalArgumentException("not true or false");
                }
                return Boolean.parseBoolean(value);
            } else if (c.isEnum()) {
                for (Object constant : c.getEnumConstants()) {
                    if (((Enum<?>) constant).name().equals(value)) {
                        return constant;
                    }
                }
                throw new IllegalArgumentException("not one of " + Arrays.toString(c.getEnumConstants()));
            }
        } catch (IllegalArgumentException e) { // NumberFormatException included
            throw new IllegalArgumentException("--conf " + key + ": bad value '" + value + "' for a "
                    + c.getSimpleName() + " (" + e.getMessage() + ")", e);
        }
        throw new IllegalArgumentException("--conf " + key + ": its type " + c.getName()
                + " cannot be set from the command line");
    }
}
