import { dataTable, formControls, listPage, secretValue } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const tokensPageStyles = [base, dataTable, formControls, listPage, secretValue];
