package dev.runner.local.template;

import java.util.List;
import java.util.Locale;

/**
 * One statement of a function role's policies, intrinsics resolved.
 *
 * @param allow     Effect Allow (else Deny)
 * @param actions   {@code service:Action} patterns
 * @param resources ARN patterns
 */
public record PolicyStatement(boolean allow, List<String> actions, List<String> resources) {

    public PolicyStatement {
        actions = List.copyOf(actions);
        resources = List.copyOf(resources);
    }

    /** IAM's matching: actions ignore case, resources do not; {@code *} is any run of characters, {@code ?} one. */
    public boolean matches(String action, String resource) {
        return actions.stream().anyMatch(a -> wildcard(a.toLowerCase(Locale.ROOT), action.toLowerCase(Locale.ROOT)))
                && resources.stream().anyMatch(r -> wildcard(r, resource));
    }

    static boolean wildcard(String pattern, String text) {
        int p = 0;
        int t = 0;
        int star = -1;
        int resume = 0;
        while (t < text.length()) {
            if (p < pattern.length() && (pattern.charAt(p) == '?' || pattern.charAt(p) == text.charAt(t))) {
                p++;
                t++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                resume = t;
            } else if (star >= 0) {
                p = star + 1;
                t = ++resume;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }
}
