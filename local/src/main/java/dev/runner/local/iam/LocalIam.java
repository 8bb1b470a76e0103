package dev.runner.local.iam;

import dev.runner.local.template.FunctionDefinition;
import dev.runner.local.template.Intrinsics;
import dev.runner.local.template.PolicyStatement;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * IAM as the local runtime plays it: each function gets credentials of its own (an access key id
 * that names it), and each AWS request signed with them is checked against the statements of its
 * role (the template's, or the one SAM would create for it), as IAM evaluates identity policies:
 * an explicit Deny wins, then any Allow, else the request is refused. Requests signed with any
 * other key (the runtime itself, the AWS CLI) are an operator's and allowed. Signatures are not
 * verified: this is a mirror of the template's grants for tests, not a security boundary.
 */
public final class LocalIam {

    /** A function's identity: the key it signs with and its role's statements. */
    public record Identity(String accessKeyId, String functionName, List<PolicyStatement> statements) {
        /** The assumed-role ARN AWS names in a refusal. */
        public String principalArn(Intrinsics.Stack stack) {
            return "arn:aws:sts::" + stack.accountId() + ":assumed-role/" + functionName + "-role/" + functionName;
        }
    }

    private final Intrinsics.Stack stack;
    private final Map<String, Identity> byAccessKey = new ConcurrentHashMap<>();

    public LocalIam(Intrinsics.Stack stack) {
        this.stack = stack;
    }

    public Intrinsics.Stack stack() {
        return stack;
    }

    /**
     * The credentials a function signs with; a function whose role is not known (a Role that is no
     * AWS::IAM::Role of the template) gets the operator's and is not checked.
     */
    public Optional<Identity> register(FunctionDefinition function) {
        return function.policies().map(statements -> {
            var identity = new Identity(function.name(), function.name(), statements);
            byAccessKey.put(identity.accessKeyId(), identity);
            return identity;
        });
    }

    /** The function an access key belongs to; empty = an operator. */
    public Optional<Identity> identity(String accessKeyId) {
        return accessKeyId == null ? Optional.empty() : Optional.ofNullable(byAccessKey.get(accessKeyId));
    }

    /** Null when allowed; else the message of AWS's AccessDenied. */
    public String denial(String accessKeyId, String action, String resource) {
        Optional<Identity> identity = identity(accessKeyId);
        if (identity.isEmpty()) {
            return null;
        }
        List<PolicyStatement> statements = identity.get().statements();
        boolean denied = statements.stream().anyMatch(s -> !s.allow() && s.matches(action, resource));
        boolean allowed = statements.stream().anyMatch(s -> s.allow() && s.matches(action, resource));
        if (allowed && !denied) {
            return null;
        }
        return "User: " + identity.get().principalArn(stack) + " is not authorized to perform: " + action + " on resource: "
                + resource + " because " + (denied ? "an explicit deny in an identity-based policy denies" : "no identity-based policy allows")
                + " the " + action + " action";
    }

    /** The access key id of a SigV4 {@code Authorization} header; null when there is none. */
    public static String accessKeyId(String authorization) {
        return dev.runner.embedded.sqs.SqsFrontEnd.accessKeyId(authorization);
    }
}
