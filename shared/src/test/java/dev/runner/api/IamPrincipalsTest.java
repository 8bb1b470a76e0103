package dev.runner.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IamPrincipalsTest {

    private final IamPrincipals principals = IamPrincipals.parse("arn:aws:iam::123456789012:user/ops/alice=admin,"
            + "arn:aws:iam::123456789012:role/teams/acme-sync=tenant:t-acme,"
            + "arn:aws:sts::123456789012:assumed-role/shared/acme-batch=tenant:t-acme");

    @Test
    void aUserIsNamedByItsArnARoleByAnySessionOfItAndASessionByItself() {
        assertEquals(Optional.of(new IamPrincipals.Scope(null)), principals.scope("arn:aws:iam::123456789012:user/ops/alice"));
        assertEquals(Optional.of(new IamPrincipals.Scope("t-acme")),
                principals.scope("arn:aws:sts::123456789012:assumed-role/acme-sync/any-session"), "the role's path is not in a session's ARN");
        assertEquals(Optional.of(new IamPrincipals.Scope("t-acme")), principals.scope("arn:aws:sts::123456789012:assumed-role/shared/acme-batch"));
        assertTrue(principals.scope("arn:aws:sts::123456789012:assumed-role/shared/another-session").isEmpty());
        assertTrue(principals.scope("arn:aws:iam::123456789012:user/alice").isEmpty(), "another path is another user");
        assertTrue(principals.scope("arn:aws:sts::999999999999:assumed-role/acme-sync/s").isEmpty(), "another account's role of the same name");
    }

    @ParameterizedTest
    @ValueSource(strings = {"arn:aws:iam::123456789012:user/a", "arn:aws:iam::123456789012:user/a=root",
            "arn:aws:iam::123456789012:user/a=tenant:", "arn:aws:iam::123456789012:user/a=tenant:bad tenant", "*=admin",
            "arn:aws:iam::123456789012:group/ops=admin", "arn:aws:iam::123456789012:user/a=admin,arn:aws:iam::123456789012:user/a=admin"})
    void anEntryThatNamesNoPrincipalOrScopeIsRefused(String text) {
        assertThrows(IllegalArgumentException.class, () -> IamPrincipals.parse(text));
    }

    @Test
    void nothingListedLetsNobodyIn() {
        assertTrue(IamPrincipals.parse("").scope("arn:aws:iam::123456789012:user/ops/alice").isEmpty());
    }
}
