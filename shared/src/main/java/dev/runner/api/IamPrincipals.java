package dev.runner.api;

import dev.runner.integration.TenantIntegration;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The IAM principals allowed into the management API when API Gateway verifies SigV4
 * (ManagementAuth iam), each as the admin or as one tenant; any other principal is refused.
 * Written as RUNNER_MANAGEMENT_IAM_PRINCIPALS: comma-separated {@code <arn>=admin} or
 * {@code <arn>=tenant:<tenantId>}. An IAM user's ARN names that user; an IAM role's ARN names every
 * session of the role, since API Gateway reports a caller that assumed it as
 * {@code arn:<partition>:sts::<account>:assumed-role/<role>/<session>} (without the role's path);
 * an assumed-role ARN names that one session.
 */
public final class IamPrincipals {

    /** What a listed principal acts as: a tenant, or the admin when {@code tenantId} is null. */
    public record Scope(String tenantId) {}

    private static final Pattern ROLE = Pattern.compile("arn:([\\w-]+):iam::(\\d{12}):role/(?:[^,=\\s]*/)?([^/,=\\s]+)");
    private static final Pattern ASSUMED_ROLE = Pattern.compile("arn:([\\w-]+):sts::(\\d{12}):assumed-role/([^/,=\\s]+)/[^/,=\\s]+");
    private static final Pattern USER = Pattern.compile("arn:[\\w-]+:iam::\\d{12}:user/[^,=\\s]+");
    private static final String TENANT = "tenant:";

    /** By exact ARN (users, sessions) or by {@link #roleKey} (roles). */
    private final Map<String, Scope> scopes;

    private IamPrincipals(Map<String, Scope> scopes) {
        this.scopes = Map.copyOf(scopes);
    }

    /** Nobody: every IAM principal is refused. */
    public static IamPrincipals none() {
        return new IamPrincipals(Map.of());
    }

    /** Reads the list; an entry that is not {@code <arn>=admin} or {@code <arn>=tenant:<tenantId>} fails, saying which. */
    public static IamPrincipals parse(String text) {
        Map<String, Scope> scopes = new LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            return none();
        }
        for (String entry : text.split(",")) {
            String trimmed = entry.strip();
            int equals = trimmed.lastIndexOf('=');
            if (equals < 0) {
                throw new IllegalArgumentException("'" + trimmed + "' is not <arn>=admin or <arn>=tenant:<tenantId>");
            }
            String arn = trimmed.substring(0, equals).strip();
            String scope = trimmed.substring(equals + 1).strip();
            Scope parsed;
            if (scope.equals("admin")) {
                parsed = new Scope(null);
            } else if (scope.startsWith(TENANT) && TenantIntegration.TENANT.matcher(scope.substring(TENANT.length())).matches()) {
                parsed = new Scope(scope.substring(TENANT.length()));
            } else {
                throw new IllegalArgumentException("'" + trimmed + "': the scope must be admin or tenant:<tenantId>");
            }
            Matcher role = ROLE.matcher(arn);
            String key = role.matches() ? roleKey(role.group(1), role.group(2), role.group(3))
                    : USER.matcher(arn).matches() || ASSUMED_ROLE.matcher(arn).matches() ? arn : null;
            if (key == null) {
                throw new IllegalArgumentException("'" + arn + "' is not the ARN of an IAM user, an IAM role or an assumed-role session");
            }
            if (scopes.put(key, parsed) != null) {
                throw new IllegalArgumentException("'" + arn + "' is listed twice");
            }
        }
        return new IamPrincipals(scopes);
    }

    /** What the principal API Gateway verified may act as; empty when it is not listed. */
    public Optional<Scope> scope(String verifiedArn) {
        Scope exact = scopes.get(verifiedArn);
        if (exact != null) {
            return Optional.of(exact);
        }
        Matcher session = ASSUMED_ROLE.matcher(verifiedArn);
        return session.matches()
                ? Optional.ofNullable(scopes.get(roleKey(session.group(1), session.group(2), session.group(3))))
                : Optional.empty();
    }

    private static String roleKey(String partition, String account, String roleName) {
        return "role " + partition + " " + account + " " + roleName;
    }
}
