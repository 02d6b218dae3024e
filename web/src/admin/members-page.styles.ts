import { dataTable, formControls, listPage } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const membersPageStyles = [base, dataTable, formControls, listPage];
