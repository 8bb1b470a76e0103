package dev.runner.local.template;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * SAM's Globals merge: maps merge key by key, lists concatenate, a scalar on the resource wins.
 * An intrinsic ({@code {"Ref": …}}, {@code {"Fn::Sub": …}}) counts as a scalar, never merged.
 */
final class Globals {

    private Globals() {}

    static Map<String, Object> merge(Map<String, Object> globals, Map<String, Object> resource) {
        Map<String, Object> merged = new LinkedHashMap<>(globals);
        resource.forEach((key, value) -> merged.merge(key, value, Globals::mergeValues));
        return merged;
    }

    @SuppressWarnings("unchecked")
    private static Object mergeValues(Object global, Object local) {
        if (global instanceof Map<?, ?> g && local instanceof Map<?, ?> l && !intrinsic(g) && !intrinsic(l)) {
            return merge((Map<String, Object>) g, (Map<String, Object>) l);
        }
        if (global instanceof List<?> g && local instanceof List<?> l) {
            List<Object> both = new ArrayList<>(g);
            both.addAll(l);
            return both;
        }
        return local;
    }

    private static boolean intrinsic(Map<?, ?> map) {
        if (map.size() != 1) {
            return false;
        }
        String key = String.valueOf(map.keySet().iterator().next());
        return key.equals("Ref") || key.startsWith("Fn::");
    }
}
