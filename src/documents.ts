// The shell's own operations: who is signed in, sign in, sign up, sign out. Everything else the
// console does goes through the registry's named operations. A module without imports: the boot
// script (src/boot.ts) sends the first of them before the console's code has loaded.
export const VIEWER_DOCUMENT = `query ShellViewer {
  viewer { id userId email userFullName userRole isPrimaryUser companyName isVerified }
}`;
export const SIGN_IN_DOCUMENT = `mutation ShellSignIn($email: String!, $password: String!) {
  signIn(email: $email, password: $password) { id email userRole }
}`;
export const SIGN_UP_DOCUMENT = `mutation ShellSignUp($input: SignUpInput!) {
  signUp(input: $input) { id email userRole }
}`;
export const SIGN_OUT_DOCUMENT = "mutation ShellSignOut { signOut }";
