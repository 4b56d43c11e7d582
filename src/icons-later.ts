// The icons of src/icons.ts that neither the side navigation nor the first list draws: one chunk,
// loaded when a page first draws one of them.
import {
  DeleteOutlined,
  EditOutlined,
  KeyOutlined,
  LockOutlined,
  ReloadOutlined,
  SettingOutlined,
  TagOutlined,
  TeamOutlined,
  UserSwitchOutlined,
} from "@ant-design/icons";

export const LATER_ICONS = {
  delete: DeleteOutlined,
  edit: EditOutlined,
  key: KeyOutlined,
  lock: LockOutlined,
  reload: ReloadOutlined,
  settings: SettingOutlined,
  tag: TagOutlined,
  team: TeamOutlined,
  role: UserSwitchOutlined,
};
