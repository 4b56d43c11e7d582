import { toHex } from "viem";
import { mnemonicToAccount, privateKeyToAddress } from "viem/accounts";

/**
 * Deposit addresses: m/44'/60'/1'/0/<index> of the service's mnemonic, a fresh index per charge. Account
 * 1', not 0': with a development chain's well-known mnemonic, account 0's first addresses are its funded
 * accounts, and a charge must not start paid. Only the address leaves this function; the private key of
 * an index is derived again when it is wanted (to sweep the funds, which this service does not do yet).
 */
export function depositAddresses(mnemonic: string): (index: number) => string {
  const base = mnemonicToAccount(mnemonic, { path: "m/44'/60'/1'/0" }).getHdKey();
  return (index) => {
    const key = base.deriveChild(index).privateKey;
    if (!key) throw new Error("the deposit key has no private part");
    return privateKeyToAddress(toHex(key));
  };
}
